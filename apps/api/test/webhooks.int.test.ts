// Suite webhooks (issue 10 §3): where a webhook may go (https, no credentials in the URL, no
// internal addresses unless the project's webhook policy allows them), the admin route that sets
// that policy, and webhook secrets written in any YAML form kept out of the stored spec text.
import { generateKeyPairSync } from 'node:crypto';
import { findCampaign, findSuiteByName, openSuiteSecret } from '@erg/db';
import { failSuiteRunWebhook } from '@erg/db/testing';
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

      const row = (await findSuiteByName(t.db, name))!;
      // Sealed, and the sealed value is what YAML reads (newlines and all): deliveries sign with it.
      const opened = openSuiteSecret(new SecretBox(Buffer.from(TEST_SECRET_KEY, 'base64')), row);
      expect(opened).toContain(SECRET_LINES[0]);
      for (const line of SECRET_LINES) expect(row.templateText).not.toContain(line);
      expect(row.templateText).toContain('[redacted]');
      // What is left is still the suite, as YAML.
      expect(row.templateText).toContain(`name: ${name}`);
      expect(row.templateText).toContain('run: "true"');

      // And so is every campaign the suite starts.
      const triggered = await call('POST', `/v1/suites/${name}/trigger`);
      expect(triggered.status).toBe(201);
      const started = (await findCampaign(t.db, triggered.body.campaignId))!;
      for (const line of SECRET_LINES) expect(started.specText).not.toContain(line);
    });
  });
  test('a large suite (validated in the worker thread) has its folded secret cut too', async () => {
    const secretLines = ['Wq8eR4tY6uI2oP0a', 'Zx1cV3bN5mL7kJ9h'];
    const yaml = [
      'name: large-yaml',
      // Over OFFLOAD_ABOVE.yaml (4 KiB): decoded and validated in the API's worker thread.
      ...Array.from({ length: 80 }, (_, i) => `# notes on this suite, line ${i}: ${'x'.repeat(40)}`),
      'webhook:',
      '  url: https://ci.example/hook',
      '  secret: >-',
      `    ${secretLines[0]}`,
      `    ${secretLines[1]}`,
      ...CAMPAIGN_YAML,
      '',
    ].join('\n');
    expect(yaml.length).toBeGreaterThan(4096);
    expect((await putYaml('large-yaml', yaml)).status).toBe(201);
    const row = (await findSuiteByName(t.db, 'large-yaml'))!;
    for (const line of secretLines) expect(row.templateText).not.toContain(line);
    expect(row.templateText).toContain('secret: "[redacted]"');
  });

  describe('where a webhook may go', () => {
    const suite = (name: string, url: string) => ({ name, webhook: { url }, campaign: { name: 'hooked', cluster: 'hooks', repetitions: 1, parameters: { n: [1] }, run: 'true' } });
    const setPolicy = (policy: unknown) => call('PUT', '/v1/projects/default/webhook-policy', policy);

    afterEach(async () => {
      expect((await setPolicy({ allowHttp: false, allowHosts: [] })).status).toBe(200);
    });

    test('the policy starts strict, and admins replace it', async () => {
      expect((await call('GET', '/v1/projects/default/webhook-policy')).body).toEqual({ project: 'default', allowHttp: false, allowHosts: [] });
      const put = await setPolicy({ allowHttp: true, allowHosts: ['ci.internal', '10.20.0.0/16'] });
      expect(put).toEqual({ status: 200, body: { project: 'default', allowHttp: true, allowHosts: ['ci.internal', '10.20.0.0/16'] } });
      expect((await call('GET', '/v1/projects/default/webhook-policy')).body.allowHosts).toEqual(['ci.internal', '10.20.0.0/16']);
      expect((await call('GET', '/v1/projects/nope/webhook-policy')).status).toBe(404);
      expect((await call('PUT', '/v1/projects/nope/webhook-policy', { allowHttp: false })).status).toBe(404);
    });

    test('entries that are not hosts or blocks, or too many, are a 400 naming each', async () => {
      const bad = await setPolicy({ allowHttp: false, allowHosts: ['ok.example', '0.0.0.0/0', '0x7f.1'] });
      expect(bad.status).toBe(400);
      expect(bad.body.error.issues.map((i: { path: string }) => i.path)).toEqual(['allowHosts.1', 'allowHosts.2']);
      const many = await setPolicy({ allowHosts: Array.from({ length: 65 }, (_, i) => `h${i}.example`) });
      expect(many.status).toBe(400);
      expect(many.body.error.issues[0].path).toBe('allowHosts');
      expect((await setPolicy({ allowHttp: 'yes' })).status).toBe(400);
    });

    test('http is refused, naming webhook.url and how to allow it; allowed, it is accepted', async () => {
      const refused = await call('PUT', '/v1/suites/plain-http', suite('plain-http', 'http://ci.example/hook'));
      expect(refused.status).toBe(400);
      expect(refused.body.error.issues).toEqual([expect.objectContaining({ path: 'webhook.url', message: expect.stringContaining('allowHttp') })]);
      await setPolicy({ allowHttp: true, allowHosts: [] });
      expect((await call('PUT', '/v1/suites/plain-http', suite('plain-http', 'http://ci.example/hook'))).status).toBe(201);
    });

    test('credentials in the URL are refused, naming webhook.url, saying to sign with the secret instead, without echoing them', async () => {
      const refused = await call('PUT', '/v1/suites/with-creds', suite('with-creds', 'https://ci:Hunter2pass@ci.example/hook'));
      expect(refused.status).toBe(400);
      expect(refused.body.error.issues).toEqual([expect.objectContaining({ path: 'webhook.url', message: expect.stringMatching(/credentials.*webhook\.secret/) })]);
      expect(JSON.stringify(refused.body)).not.toContain('Hunter2pass');
      expect(await findSuiteByName(t.db, 'with-creds')).toBeNull();
    });

    test.each(['https://127.0.0.1/hook', 'https://2130706433/hook', 'https://0x7f.1/hook', 'https://[::ffff:127.0.0.1]/hook', 'https://169.254.169.254/latest', 'https://10.1.2.3/', 'https://localhost/'])(
      'a literal internal address is refused when the suite is stored: %s',
      async (url) => {
        const refused = await call('PUT', '/v1/suites/literal', suite('literal', url));
        expect(refused.status).toBe(400);
        expect(refused.body.error.issues).toEqual([expect.objectContaining({ path: 'webhook.url', message: expect.stringContaining('allowHosts') })]);
      },
    );

    test('an allow-listed internal host is accepted', async () => {
      await setPolicy({ allowHttp: true, allowHosts: ['127.0.0.1', 'ci.internal'] });
      expect((await call('PUT', '/v1/suites/internal', suite('internal', 'http://2130706433:8080/hook'))).status).toBe(201);
      expect((await call('PUT', '/v1/suites/internal', suite('internal', 'http://ci.internal/hook'))).status).toBe(200);
    });
  });

  test('viewers see only "delivery failed (…)": an error stored before these rules is not shown as it was', async () => {
    const yaml = ['name: legacy', 'webhook: { url: "https://ci.example/hook" }', ...CAMPAIGN_YAML, ''].join('\n');
    expect((await putYaml('legacy', yaml)).status).toBe(201);
    const run = await call('POST', '/v1/suites/legacy/trigger');
    expect(run.status).toBe(201);
    await failSuiteRunWebhook(t.db, run.body.id, { attempts: 5, error: 'POST http://10.0.0.5:5432/hook failed: ECONNREFUSED' });
    const shown = await call('GET', `/v1/suites/legacy/runs/${run.body.id}`);
    expect(shown.body.webhook).toMatchObject({ status: 'failed', attempts: 5, lastError: 'delivery failed' });
    await failSuiteRunWebhook(t.db, run.body.id, { attempts: 5, error: 'delivery failed (status 502)' });
    expect((await call('GET', '/v1/suites/legacy/runs')).body.items[0].webhook.lastError).toBe('delivery failed (status 502)');
  });
});
