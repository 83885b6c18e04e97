// Suite webhooks (issue 10 §3): where a webhook may go (https, no credentials in the URL, no
// internal addresses unless the project's webhook policy allows them), the admin route that sets
// that policy, and webhook secrets written in any YAML form kept out of the stored spec text.
import { generateKeyPairSync } from 'node:crypto';
import { openSuiteSecret } from '@erg/db';
import { SecretBox } from '@erg/secrets';
import { TEST_SECRET_KEY } from '@erg/testkit';
import { startTestApi, type TestApi } from './helpers';

const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const CLUSTER = {
  name: 'hooks', host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY,
  hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/var/lib/erg-test',
};
const CAMPAIGN_YAML = ['campaign:', '  name: hooked', '  cluster: hooks', '  repetitions: 1', '  parameters: { n: [1] }', '  run: "true"'];

describe('suite webhooks (Postgres + Redis)', () => {
  let t: TestApi;

  async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}, token?: string) {
    const res = await t.app.inject({
      method: method as 'GET', url, headers: { authorization: `Bearer ${token ?? t.token}`, ...headers },
      ...(body === undefined ? {} : { payload: body as string }),
    });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null };
  }
  const putYaml = (name: string, yaml: string) => call('PUT', `/v1/suites/${name}`, yaml, { 'content-type': 'application/yaml' });

  beforeAll(async () => {
    t = await startTestApi();
    expect((await call('POST', '/v1/clusters', CLUSTER)).status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('a webhook secret in any YAML form is sealed and cut out of the stored text', () => {
    // Each form's value, as YAML reads it, and lines that hold its characters in the text.
    const SECRET_LINES = ['Kp7vQ2xW9mZ4rT8y', 'Lc3nB6hJ1sD5fG0a'];
    const FORMS: Record<string, string[]> = {
      folded: ['  secret: >-', `    ${SECRET_LINES[0]}`, `    ${SECRET_LINES[1]}`],
      'folded, kept newline': ['  secret: >', `    ${SECRET_LINES[0]}`, '', `    ${SECRET_LINES[1]}`],
      literal: ['  secret: |', `    ${SECRET_LINES[0]}`, `    ${SECRET_LINES[1]}`],
      'multi-line plain': [`  secret: ${SECRET_LINES[0]}`, `    ${SECRET_LINES[1]}`],
      'multi-line double-quoted': [`  secret: "${SECRET_LINES[0]}`, `    ${SECRET_LINES[1]}"`],
      'multi-line single-quoted': [`  secret: '${SECRET_LINES[0]}`, `    ${SECRET_LINES[1]}'`],
      'double-quoted with escapes': [`  secret: "${SECRET_LINES[0]}\\u0041${SECRET_LINES[1]}"`],
      'flow mapping': [`  { url: "https://ci.example/hook", secret: "${SECRET_LINES[0]}${SECRET_LINES[1]}" }`],
      'explicit key': ['  ? secret', `  : ${SECRET_LINES[0]}`, `    ${SECRET_LINES[1]}`],
      'key written with an escape': [`  "secr\\u0065t": >-`, `    ${SECRET_LINES[0]}`, `    ${SECRET_LINES[1]}`],
      'anchored in the template, aliased': ['  secret: *s'],
    };

    test.each(Object.entries(FORMS))('%s', async (form, lines) => {
      const name = `yaml-${form.replace(/[^a-z]+/g, '-').replace(/-$/, '')}`;
      const flow = form === 'flow mapping';
      const aliased = form.startsWith('anchored');
      const campaign = aliased
        ? [...CAMPAIGN_YAML, '  description: &s >-', `    ${SECRET_LINES[0]}`, `    ${SECRET_LINES[1]}`]
        : CAMPAIGN_YAML;
      const yaml = [
        `name: ${name}`,
        ...(aliased ? campaign : []),
        'webhook:',
        ...(flow ? [] : ['  url: https://ci.example/hook']),
        ...lines,
        ...(aliased ? [] : campaign),
        '',
      ].join('\n');
      const put = await putYaml(name, yaml);
      expect(put.status).toBe(201);
      expect(put.body.webhook).toEqual({ url: 'https://ci.example/hook', signed: true });

      const row = (await t.db.pool.query<{ id: string; template_text: string; webhook_secret: string }>(
        'SELECT id, template_text, webhook_secret FROM suites WHERE name = $1', [name],
      )).rows[0]!;
      // Sealed, and the sealed value is what YAML reads (newlines and all): deliveries sign with it.
      const opened = openSuiteSecret(new SecretBox(Buffer.from(TEST_SECRET_KEY, 'base64')), { id: row.id, webhookSecret: row.webhook_secret });
      expect(opened).toContain(SECRET_LINES[0]);
      for (const line of SECRET_LINES) expect(row.template_text).not.toContain(line);
      expect(row.template_text).toContain('[redacted]');
      // What is left is still the suite, as YAML.
      expect(row.template_text).toContain(`name: ${name}`);
      expect(row.template_text).toContain('run: "true"');

      // And so is every campaign the suite starts.
      const triggered = await call('POST', `/v1/suites/${name}/trigger`);
      expect(triggered.status).toBe(201);
      const spec = (await t.db.pool.query<{ spec_text: string }>('SELECT spec_text FROM campaigns WHERE id = $1', [triggered.body.campaignId])).rows[0]!;
      for (const line of SECRET_LINES) expect(spec.spec_text).not.toContain(line);
    });
  });
});
