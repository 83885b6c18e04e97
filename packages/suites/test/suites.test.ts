import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { closedPort } from '@erg/testkit';
import { cronIssue, deliverWebhook, isTimeZone, nextRunAt, signature, validateSuite, WebhookError } from '@erg/suites';

const campaign = { name: 'n', cluster: 'local', repetitions: 3, parameters: { a: [1, 2] }, run: 'echo {{a}}' };

describe('validateSuite', () => {
  test('applies defaults: last-passing baseline, 5 % at p < 0.05, no schedule, no webhook', () => {
    const result = validateSuite({ name: 'nightly', campaign }, { maxRuns: 100 });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.suite.fields).toMatchObject({
      schedule: null, webhook: null, baseline: { policy: 'last-passing' },
      regression: { threshold: 0.05, alpha: 0.05, minRepetitions: 3, maxCv: 0.25 },
    });
    expect(result.suite.runs).toBe(6);
    expect(result.suite.spec.execution).toBe('slurm');
  });

  test('the campaign template is held to the size limit, with paths under campaign.', () => {
    const result = validateSuite({ name: 'big', campaign }, { maxRuns: 5 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.every((i) => i.path.startsWith('campaign'))).toBe(true);
  });

  test("an adaptive campaign template is refused at campaign.strategy: a verdict compares fixed repetitions", () => {
    const { repetitions: _, ...rest } = campaign;
    const result = validateSuite({ name: 'x', campaign: { ...rest, strategy: 'adaptive' } }, { maxRuns: 100 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toEqual([expect.objectContaining({ path: 'campaign.strategy', code: 'strategy_conflict', message: expect.stringContaining('remove strategy') })]);
  });

  test("the template's regexes are RE2: what RE2 cannot express is refused at campaign.metrics[i].regex and campaign.phases[i].<field>", () => {
    const result = validateSuite({
      name: 'x',
      campaign: {
        ...campaign,
        metrics: [{ name: 'v', regex: 'v=([0-9])' }, { name: 'ms', regex: '([0-9]+)(?= ms)' }],
        phases: [{ name: 'p', begin: '(?<t>\\d+) (\\w+) \\1', end: '(?<t>\\d+) end' }],
      },
    }, { maxRuns: 100 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toEqual([
      { path: 'campaign.metrics[1].regex', code: 'invalid_regex', message: expect.stringMatching(/^RE2 syntax: lookahead /) },
      { path: 'campaign.phases[0].begin', code: 'invalid_regex', message: expect.stringMatching(/^RE2 syntax: backreferences /) },
    ]);
  });

  test('a missing campaign and unknown fields are named', () => {
    const result = validateSuite({ name: 'x', schedul: {} }, { maxRuns: 100 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.map((i) => i.path).sort()).toEqual(['campaign', 'schedul']);
    expect(result.issues.find((i) => i.path === 'schedul')?.message).toContain('schedule');
  });

  test('webhook secrets must be long enough to sign with', () => {
    const result = validateSuite({ name: 'x', campaign, webhook: { url: 'https://ci.example/hook', secret: 'short' } }, { maxRuns: 100 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toEqual([expect.objectContaining({ path: 'webhook.secret', message: expect.stringContaining('16 characters') })]);
  });
});

describe('validateSuite: webhook URLs', () => {
  test('credentials in the URL are refused, naming webhook.url, with the signing secret as the way instead', () => {
    const result = validateSuite({ name: 'x', campaign, webhook: { url: 'https://ci:hunter2@ci.example/hook' } }, { maxRuns: 100 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toEqual([expect.objectContaining({ path: 'webhook.url', message: expect.stringMatching(/credentials.*webhook\.secret/) })]);
    expect(JSON.stringify(result.issues)).not.toContain('hunter2');
  });

  test('http and addresses are left to the API, which knows the project\'s policy', () => {
    expect(validateSuite({ name: 'x', campaign, webhook: { url: 'http://127.0.0.1:9/hook' } }, { maxRuns: 100 }).ok).toBe(true);
  });
});

describe('cron schedules', () => {
  test('five fields, six with seconds, and macros are accepted; four fields are not', () => {
    expect(cronIssue('0 2 * * *', 'UTC')).toBeNull();
    expect(cronIssue('*/5 0 2 * * 1-5', 'UTC')).toBeNull();
    expect(cronIssue('@daily', 'UTC')).toBeNull();
    expect(cronIssue('0 2 * *', 'UTC')).toMatch(/expected 5 fields/);
    expect(cronIssue('61 2 * * *', 'UTC')).toMatch(/not a cron expression/);
  });

  test('time zones are IANA names', () => {
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });

  test('02:00 in Berlin is 01:00 UTC in winter and 00:00 UTC in summer', () => {
    expect(nextRunAt('0 2 * * *', 'Europe/Berlin', new Date('2026-11-30T12:00:00Z'))?.toISOString()).toBe('2026-12-01T01:00:00.000Z');
    expect(nextRunAt('0 2 * * *', 'Europe/Berlin', new Date('2026-07-01T12:00:00Z'))?.toISOString()).toBe('2026-07-02T00:00:00.000Z');
    expect(nextRunAt('0 2 * * *', 'America/New_York', new Date('2026-11-30T12:00:00Z'))?.toISOString()).toBe('2026-12-01T07:00:00.000Z');
  });
});

describe('webhook delivery (a local HTTP receiver)', () => {
  // The receiver is on loopback over http: only a project policy that says so lets a webhook there.
  const policy = { allowHttp: true, allowHosts: ['127.0.0.1'] };
  let server: http.Server;
  let url = '';
  let answer = 200;
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.statusCode = answer;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  test('POSTs the body with event, delivery id and an HMAC-SHA256 signature the receiver can check', async () => {
    answer = 204;
    const body = JSON.stringify({ event: 'suite.finished', suiteRun: { id: 'r1', status: 'regressed' } });
    await deliverWebhook(url, body, { deliveryId: 'r1', secret: 'a-secret-of-16-chars', policy });
    const got = received.at(-1)!;
    expect(got.body).toBe(body);
    expect(got.headers['x-erg-event']).toBe('suite.finished');
    expect(got.headers['x-erg-delivery']).toBe('r1');
    const expected = 'sha256=' + createHmac('sha256', 'a-secret-of-16-chars').update(got.body).digest('hex');
    expect(got.headers['x-erg-signature']).toBe(expected);
    expect(signature('a-secret-of-16-chars', body)).toBe(expected);
  });

  test('unsigned without a secret', async () => {
    answer = 200;
    await deliverWebhook(url, '{}', { deliveryId: 'r2', secret: null, policy });
    expect(received.at(-1)!.headers['x-erg-signature']).toBeUndefined();
  });

  test.each([
    [500, false],
    [503, false],
    [429, false],
    [408, false],
    [410, true],
    [400, true],
  ])('a %i answer fails the attempt; permanent: %s', async (status, permanent) => {
    answer = status;
    const err = await deliverWebhook(url, '{}', { deliveryId: 'r3', secret: null, policy }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookError);
    expect((err as WebhookError).permanent).toBe(permanent);
    expect((err as WebhookError).message).toContain(String(status));
  });

  test('an unreachable receiver is a retryable failure that names the cause', async () => {
    const port = await closedPort();
    const err = await deliverWebhook(`http://127.0.0.1:${port}/hook`, '{}', { deliveryId: 'r4', secret: null, timeoutMs: 2000, policy }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookError);
    expect((err as WebhookError).permanent).toBe(false);
    expect((err as WebhookError).message).toBe('delivery failed (connection refused)');
    expect((err as WebhookError).detail).toMatch(/ECONNREFUSED/);
  });
});
