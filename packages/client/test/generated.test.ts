import { readFileSync } from 'node:fs';
import * as api from '@erg/api';

// The script is plain Node; handing it the API's sources (through Jest's @erg/* mapping) keeps
// this test independent of a stale apps/api/dist.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { generate, OPENAPI_FILE, TYPES_FILE } = require('../../../scripts/generate-client.js') as {
  generate(api: unknown): Promise<{ openapi: string; types: string }>;
  OPENAPI_FILE: string;
  TYPES_FILE: string;
};

const HINT = 'is out of date with the API; run `node scripts/generate-client.js` (after `npx turbo run build`) and commit the result';

describe('generated client files', () => {
  let fresh: { openapi: string; types: string };
  beforeAll(async () => {
    fresh = await generate(api);
  }, 60_000);

  test('packages/client/openapi.json matches the API', () => {
    const committed = readFileSync(OPENAPI_FILE, 'utf8');
    if (committed !== fresh.openapi) throw new Error(`packages/client/openapi.json ${HINT}`);
  });

  test('packages/client/src/generated/api.ts matches the OpenAPI document', () => {
    const committed = readFileSync(TYPES_FILE, 'utf8');
    if (committed !== fresh.types) throw new Error(`packages/client/src/generated/api.ts ${HINT}`);
  });

  test('every schema the document refers to is defined', () => {
    const doc = JSON.parse(fresh.openapi) as { components?: { schemas?: Record<string, unknown> } };
    const refs = [...fresh.openapi.matchAll(/"\$ref": "#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.filter((name) => !(name in (doc.components?.schemas ?? {})))).toEqual([]);
  });

  test('every JSON response is a named schema of @erg/spec, so the client and the web app have a name for it', () => {
    // A schema written inline in a route shows up here as an anonymous object: give it a
    // `.meta({ id })` in @erg/spec and use it from there.
    type Operation = { responses?: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }> };
    const doc = JSON.parse(fresh.openapi) as { paths: Record<string, Record<string, Operation>> };
    const anonymous: string[] = [];
    let named = 0;
    for (const [route, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(op.responses ?? {})) {
          const schema = response.content?.['application/json']?.schema;
          if (!schema || !status.startsWith('2')) continue;
          if (typeof schema.$ref === 'string') named++;
          else anonymous.push(`${method.toUpperCase()} ${route} ${status}`);
        }
      }
    }
    expect(named).toBeGreaterThan(30);
    expect(anonymous).toEqual([]);
  });
});
