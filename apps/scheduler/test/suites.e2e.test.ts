// Suites end to end on the local Slurm cluster: a cron schedule fires through BullMQ's job
// scheduler, the campaign runs on Slurm, the scheduler's tick judges it, and the webhook
// receiver gets the verdict, signed, after a failed first delivery.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@erg/testkit';
import { Harness } from './harness';

jest.setTimeout(300_000);

const SECRET = 'e2e-webhook-secret-0123';

describe('suites on the local Slurm cluster', () => {
  const h = new Harness();
  let receiver: http.Server;
  let hookUrl = '';
  const deliveries: { headers: http.IncomingHttpHeaders; body: string; answered: number }[] = [];

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        // The first delivery fails, so the retry path is exercised too.
        const answered = deliveries.length === 0 ? 503 : 200;
        deliveries.push({ headers: req.headers, body, answered });
        res.statusCode = answered;
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/erg`;
    await h.start();
    await h.registerCluster('local');
    // The receiver is on loopback, over http: only the project's webhook policy lets a webhook there.
    expect((await h.call('PUT', '/v1/projects/default/webhook-policy', { allowHttp: true, allowHosts: ['127.0.0.1'] })).status).toBe(200);
    await h.startInProcessScheduler();
  });
  afterAll(async () => {
    await h.stop();
    await new Promise((resolve) => receiver.close(resolve));
  });

  test('a cron schedule starts the suite, the finished run is judged and its verdict POSTed to the webhook', async () => {
    const created = await h.call('POST', '/v1/suites', {
      name: 'every-few-seconds',
      // Six fields: seconds first. Every 5 s, read in a zone other than UTC.
      schedule: { cron: '*/5 * * * * *', timezone: 'Europe/Berlin' },
      webhook: { url: hookUrl, secret: SECRET },
      campaign: {
        name: 'tiny', cluster: 'local', repetitions: 3, parameters: { secs: [1] },
        resources: { time: '00:02:00' }, run: 'sleep {{secs}}', telemetry: { intervalMs: 200 },
      },
    });
    expect(created.status).toBe(201);

    const first = await waitFor(
      async () => {
        const { body } = await h.call('GET', '/v1/suites/every-few-seconds/runs?limit=200');
        return body.items.length > 0 ? body.items.at(-1) : undefined;
      },
      { timeoutMs: 30_000, what: 'a scheduled run of the suite' },
    );
    expect(first).toMatchObject({ trigger: 'schedule', baselineId: null, status: 'running' });
    // Unschedule it so that the slots after this one start nothing more.
    const put = await h.call('PUT', '/v1/suites/every-few-seconds', {
      name: 'every-few-seconds', webhook: { url: hookUrl, secret: SECRET }, campaign: created.body.campaign,
    });
    expect(put.status).toBe(200);
    expect(put.body.schedule).toBeNull();

    const judged = await waitFor(
      async () => {
        const { body } = await h.call('GET', `/v1/suites/every-few-seconds/runs/${first.id}`);
        return body.status !== 'running' ? body : undefined;
      },
      { timeoutMs: 150_000, what: 'the scheduled run to be judged' },
    );
    expect(judged).toMatchObject({ status: 'pass', reasons: ['no_baseline'], campaign: { state: 'completed', runCounts: { completed: 3 } } });

    // 503 first, then delivered on the retry (exponential backoff from 5 s).
    const delivered = await waitFor(
      async () => {
        const { body } = await h.call('GET', `/v1/suites/every-few-seconds/runs/${first.id}`);
        return body.webhook?.status === 'delivered' ? body : undefined;
      },
      { timeoutMs: 60_000, what: 'the webhook to be delivered' },
    );
    expect(delivered.webhook).toMatchObject({ attempts: 2, lastError: null });
    const mine = deliveries.filter((d) => d.headers['x-erg-delivery'] === first.id);
    expect(mine.map((d) => d.answered)).toEqual([503, 200]);
    const last = mine.at(-1)!;
    expect(last.headers['x-erg-signature']).toBe('sha256=' + createHmac('sha256', SECRET).update(last.body).digest('hex'));
    const payload = JSON.parse(last.body);
    expect(payload).toMatchObject({ event: 'suite.finished', suiteRun: { id: first.id, suite: 'every-few-seconds', status: 'pass', trigger: 'schedule' } });
    expect(JSON.stringify(payload)).not.toContain(SECRET);

    // Each cron slot started at most one campaign.
    const { body: all } = await h.call('GET', '/v1/suites/every-few-seconds/runs?limit=200');
    const campaigns = new Set(all.items.map((r: { campaignId: string }) => r.campaignId));
    expect(campaigns.size).toBe(all.items.length);
  });

  test('a manual trigger after a planted slowdown is judged regressed against the last passing run', async () => {
    const spec = (run: string) => ({
      name: 'manual', regression: { threshold: 0.1 },
      campaign: { name: 'sleepy', cluster: 'local', repetitions: 3, parameters: { secs: [1] }, resources: { time: '00:02:00' }, run, telemetry: { intervalMs: 200 } },
    });
    expect((await h.call('PUT', '/v1/suites/manual', spec('sleep {{secs}}'))).status).toBe(201);
    const runToEnd = async () => {
      const t = await h.call('POST', '/v1/suites/manual/trigger');
      expect(t.status).toBe(201);
      return waitFor(
        async () => {
          const { body } = await h.call('GET', `/v1/suites/manual/runs/${t.body.id}`);
          return body.status !== 'running' ? body : undefined;
        },
        { timeoutMs: 150_000, what: 'the suite run to be judged' },
      );
    };
    const base = await runToEnd();
    expect(base.status).toBe('pass');
    expect((await h.call('PUT', '/v1/suites/manual', spec('sleep {{secs}}; sleep 0.6'))).status).toBe(200);
    const slow = await runToEnd();
    expect(slow.baselineId).toBe(base.campaignId);
    expect(slow.status).toBe('regressed');
    const time = slow.verdict.configurations[0].verdicts.find((v: { metric: string }) => v.metric === 'time');
    expect(time).toMatchObject({ status: 'regressed', nBaseline: 3, nCandidate: 3 });
    expect(time.change).toBeGreaterThan(0.4);
    expect(time.ci95[0]).toBeGreaterThan(0.1);
  });
});
