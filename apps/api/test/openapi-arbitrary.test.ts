// The fuzz test's generator checked against an independent validator: every value it makes in
// `valid` mode for a schema of the API's OpenAPI document is accepted by Ajv (JSON Schema
// 2020-12) for that schema. Without this, a generator bug would quietly turn "valid" requests
// into junk and the fuzz test would stop exercising the routes' happy paths.
import fc from 'fast-check';
import { arbitraryFor, type JsonSchema } from './openapi-arbitrary';
import { openApiValidator } from './openapi-validate';
import openapi from '../../../packages/client/openapi.json';

const document = openapi as unknown as JsonSchema;
const schemas = Object.entries((document['components'] as { schemas: Record<string, JsonSchema> }).schemas);
const validator = openApiValidator(document);

function requestBodies(): Array<[string, JsonSchema]> {
  const out: Array<[string, JsonSchema]> = [];
  for (const [path, ops] of Object.entries(document['paths'] as Record<string, Record<string, { requestBody?: { content: Record<string, { schema: JsonSchema }> } }>>)) {
    for (const [method, op] of Object.entries(ops)) {
      const schema = op.requestBody?.content['application/json']?.schema;
      if (schema) out.push([`${method.toUpperCase()} ${path}`, schema]);
    }
  }
  return out;
}

describe('arbitraryFor (OpenAPI → fast-check)', () => {
  test.each(schemas)('valid values of components.schemas.%s pass Ajv', (_name, schema) => {
    const check = validator.compile(schema);
    fc.assert(
      fc.property(arbitraryFor(schema, { document }), (value) => {
        if (!check(value)) throw new Error(`${JSON.stringify(value)}: ${validator.errorsText(check)}`);
      }),
      { numRuns: 40, seed: 42 },
    );
  });

  test.each(requestBodies())('valid bodies of %s pass Ajv', (_route, schema) => {
    const check = validator.compile(schema);
    fc.assert(
      fc.property(arbitraryFor(schema, { document }), (value) => {
        if (!check(value)) throw new Error(`${JSON.stringify(value)}: ${validator.errorsText(check)}`);
      }),
      { numRuns: 40, seed: 7 },
    );
  });

  test('junk mode does leave the schema sometimes (else it would fuzz nothing)', () => {
    const [, schema] = requestBodies().find(([route]) => route === 'POST /v1/campaigns')!;
    const check = validator.compile(schema);
    const values = fc.sample(arbitraryFor(schema, { document, junk: 0.03 }), { numRuns: 200, seed: 3 });
    const invalid = values.filter((v) => !check(v)).length;
    expect(invalid).toBeGreaterThan(20);
    expect(invalid).toBeLessThan(200);
  });
});
