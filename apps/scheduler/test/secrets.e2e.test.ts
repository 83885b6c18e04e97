// Secrets end to end on the local Slurm cluster: trust on first use against the real sshd, and a
// scan of every API response and every log line of a whole flow (cluster with its private key,
// suite with a webhook secret, a campaign run to its end, everything read back) for secrets.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { findClusterByName, findRunLogSource, findSuiteByName } from '@erg/db';
import { overwriteClusterHostKey } from '@erg/db/testing';
import { waitFor } from '@erg/testkit';
import { Harness } from './harness';

jest.setTimeout(300_000);

describe('trust on first use against the local sshd', () => {
  const h = new Harness();
  const lines: string[] = [];

  beforeAll(async () => {
    h.logSink = { write: (line: string) => void lines.push(line) };
    await h.start();
    await h.startInProcessScheduler();
  });
  afterAll(async () => {
    await h.stop();
  });

  test('the first connection records the real fingerprint, which is pinned from then on', async () => {
    await h.registerCluster('tofu', { hostKeySha256: null, hostKeyPolicy: 'trust-on-first-use' });
    const before = await h.call('GET', '/v1/clusters/tofu');
    expect(before.body).toMatchObject({ hostKeyPolicy: 'trust-on-first-use', hostKeySha256: null });

    const campaign = await h.submit({ name: 'tofu', cluster: 'tofu', run: 'echo hello' });
    const [run] = await h.waitForCampaignEnd(campaign.id, 90_000);
    expect(run.state).toBe('completed');
    const after = await h.call('GET', '/v1/clusters/tofu');
    // The fingerprint deploy/local-slurm computed from the sshd's host key file.
    expect(after.body).toMatchObject({ hostKeyPolicy: 'trust-on-first-use', hostKeySha256: h.local.hostKeySha256 });
    const said = lines.map((l) => JSON.parse(l)).find((l) => /trusted the host key on first use/.test(l.msg));
    expect(said).toMatchObject({ cluster: 'tofu', hostKeySha256: h.local.hostKeySha256 });

    // Pinned like any other now: a fingerprint that does not match refuses the connection.
    const wrong = `SHA256:${'Z'.repeat(43)}`;
    await overwriteClusterHostKey(h.db, 'tofu', wrong);
    const refused = await h.submit({ name: 'tofu-refused', cluster: 'tofu', run: 'echo should-not-run' });
    const pending = await waitFor(
      async () => {
        const { body } = await h.call('GET', `/v1/runs/${refused.runs[0]!.id}`);
        return body.state === 'pending' && body.reason ? body : undefined;
      },
      { timeoutMs: 30_000, what: 'the refused run to show why it waits' },
    );
    expect(pending.reason).toMatch(/host key/i);
    expect(pending.reason).toContain(wrong);
    // And the learned fingerprint was not overwritten by the refused attempt.
    expect((await h.call('GET', '/v1/clusters/tofu')).body.hostKeySha256).toBe(wrong);
  });

  test('a pinned cluster without a fingerprint is refused with a 400 naming the field', async () => {
    const res = await h.call('PUT', '/v1/clusters/nofp', {
      host: h.local.host, port: h.local.port, user: h.local.user, privateKey: h.local.privateKey, workDir: h.workDir,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.issues).toEqual([expect.objectContaining({ path: 'hostKeySha256', code: 'required' })]);
  });
});

describe('no secret in any response or log line of a whole flow', () => {
  const h = new Harness();
  const lines: string[] = [];
  const WEBHOOK_SECRET = 'whsec-e2e-Vq3Lx9Pz7Kd2Mn8R';
  let receiver: http.Server;
  const deliveries: { signature: string | undefined; body: string }[] = [];

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        deliveries.push({ signature: req.headers['x-erg-signature'] as string | undefined, body });
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    h.logSink = { write: (line: string) => void lines.push(line) };
    h.responseLog = [];
    await h.start();
    await h.startInProcessScheduler();
  });
  afterAll(async () => {
    await h.stop();
    await new Promise((resolve) => receiver.close(resolve));
  });

  test('cluster, suite, campaign, runs, logs and results: secrets only sealed in the database', async () => {
    await h.registerCluster('local');
    // The receiver is on loopback, over http: only the project's webhook policy lets a webhook there.
    expect((await h.call('PUT', '/v1/projects/default/webhook-policy', { allowHttp: true, allowHosts: ['127.0.0.1'] })).status).toBe(200);
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    // YAML: the body that becomes the suite's campaigns' spec text holds the secret too.
    const suiteYaml = [
      'name: scan',
      'webhook:',
      `  url: ${hookUrl}`,
      `  secret: ${WEBHOOK_SECRET}`,
      'campaign:',
      '  name: scan',
      '  cluster: local',
      '  repetitions: 1',
      '  resources: { time: "00:02:00" }',
      // A job that prints what must never be stored or shown: a password and a token (made by the
      // job, so that neither is in the spec, which the API shows as the user wrote it).
      `  run: "echo password=hunter$((1+1))-db; echo token erg_$(printf 'x%.0s' {1..43})"`,
      '',
    ].join('\n');
    const created = await h.call('PUT', '/v1/suites/scan', suiteYaml, 'application/yaml');
    expect(created.status).toBe(201);
    const trigger = await h.call('POST', '/v1/suites/scan/trigger');
    expect(trigger.status).toBe(201);
    const campaignId: string = trigger.body.campaignId;
    const [run] = await h.waitForCampaignEnd(campaignId, 120_000);
    expect(run.state).toBe('completed');
    await waitFor(
      async () => {
        const { body } = await h.call('GET', `/v1/suites/scan/runs/${trigger.body.id}`);
        return body.webhook?.status === 'delivered' ? body : undefined;
      },
      { timeoutMs: 60_000, what: 'the webhook to be delivered' },
    );
    // The scheduler opened the sealed secret: the delivery is signed with the real one.
    const delivery = deliveries.at(-1)!;
    expect(delivery.signature).toBe('sha256=' + createHmac('sha256', WEBHOOK_SECRET).update(delivery.body).digest('hex'));

    // Read everything back.
    for (const url of [
      '/v1/clusters', '/v1/clusters/local', `/v1/campaigns/${campaignId}`, `/v1/campaigns/${campaignId}/runs`, `/v1/runs/${run.id}`,
      `/v1/runs/${run.id}/logs`, `/v1/campaigns/${campaignId}/results`, '/v1/suites', '/v1/suites/scan', '/v1/suites/scan/runs',
      `/v1/suites/scan/runs/${trigger.body.id}`, '/v1/queue', '/v1/campaigns',
    ]) {
      expect((await h.call('GET', url)).status).toBe(200);
    }
    const logs = await h.call('GET', `/v1/runs/${run.id}/logs`);
    expect(logs.body.stdout).toContain('password=[redacted]');
    expect((await findRunLogSource(h.db, run.id))!.stdoutTail).toContain('password=[redacted]');

    const keyBody = h.local.privateKey.split('\n').filter((l) => /^[A-Za-z0-9+/=]{20,}$/.test(l));
    expect(keyBody.length).toBeGreaterThan(0);
    const forbidden = [...keyBody, WEBHOOK_SECRET, 'hunter2', h.token];
    const everything = [...h.responseLog!, ...lines];
    expect(h.responseLog!.length).toBeGreaterThan(15);
    expect(lines.length).toBeGreaterThan(5);
    for (const text of everything) {
      for (const secret of forbidden) expect(text).not.toContain(secret);
      expect(text).not.toMatch(/\bergr?_[A-Za-z0-9_-]{20,}/);
    }

    // At rest: ciphertext only.
    const cluster = (await findClusterByName(h.db, 'local'))!;
    expect(cluster.privateKey).toMatch(/^erg1:[0-9a-f]{8}:/);
    for (const line of keyBody) expect(cluster.privateKey).not.toContain(line);
    const suite = (await findSuiteByName(h.db, 'scan'))!;
    expect(suite.webhookSecret).toMatch(/^erg1:/);
    expect(suite.templateText).not.toContain(WEBHOOK_SECRET);
  });
});
