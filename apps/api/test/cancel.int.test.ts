// Cancelling a campaign answers at once with how many runs are being cancelled: pending ones
// (erg cancels them itself) and active ones (handed to Slurm; the scheduler scancels them). Up to
// ERG_CANCEL_INLINE_RUNS pending runs are cancelled before the answer, more after it.
import { generateKeyPairSync } from 'node:crypto';
import { claimRunsForSubmission, countCampaignRunEvents, markRunsQueued, runCountsByCampaign } from '@erg/db';
import { waitFor } from '@erg/testkit';
import { startTestApi, type TestApi } from './helpers';

const PRIVATE_KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'sec1', format: 'pem' }).toString();
const CLUSTER = { host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY, hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/var/lib/erg-test' };

async function setUp(env: Record<string, string> = {}) {
  const t = await startTestApi(env);
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${t.token}` }, ...(body === undefined ? {} : { payload: body as object }) });
    return { status: res.statusCode, body: res.json() };
  };
  const put = await call('PUT', '/v1/clusters/c1', CLUSTER);
  expect(put.status).toBe(200);
  /** A campaign of `runs` runs, `active` of them handed to Slurm (queued with a job id). */
  const campaign = async (runs: number, active: number) => {
    const created = await call('POST', '/v1/campaigns', { name: 'cancel-me', cluster: 'c1', parameters: { n: Array.from({ length: runs }, (_, k) => k) }, run: 'true' });
    expect(created.status).toBe(201);
    const claimed = await claimRunsForSubmission(t.db, put.body.id, active);
    await markRunsQueued(t.db, claimed.map((r, k) => ({ runId: r.id, slurmJobId: String(5000 + k) })));
    return created.body.id as string;
  };
  return { t, call, campaign };
}

describe('POST /v1/campaigns/{id}/cancel (Postgres + Redis)', () => {
  describe('with the default inline budget', () => {
    let s: Awaited<ReturnType<typeof setUp>>;
    beforeAll(async () => {
      s = await setUp();
    });
    afterAll(async () => {
      await s.t.close();
    });

    test('says how many pending and active runs are being cancelled; pending ones are cancelled before the answer', async () => {
      const id = await s.campaign(10, 3);
      const res = await s.call('POST', `/v1/campaigns/${id}/cancel`);
      expect(res.status).toBe(202);
      expect(res.body.cancelling).toEqual({ pending: 7, active: 3 });
      expect(res.body).toMatchObject({ state: 'cancelling', runCounts: { cancelled: 7, queued: 3 } });
      expect(res.body.cancelRequestedAt).not.toBeNull();
      // Every cancelled run has its event, as every transition does.
      expect(await countCampaignRunEvents(s.t.db, id, 'cancelled')).toBe(7);
    });

    test('cancelling again, or a campaign with nothing left to cancel, says so: zero and zero', async () => {
      const id = await s.campaign(2, 0);
      expect((await s.call('POST', `/v1/campaigns/${id}/cancel`)).body.cancelling).toEqual({ pending: 2, active: 0 });
      const again = await s.call('POST', `/v1/campaigns/${id}/cancel`);
      expect(again.status).toBe(202);
      expect(again.body).toMatchObject({ state: 'cancelled', cancelling: { pending: 0, active: 0 } });
    });
  });

  describe('beyond the inline budget', () => {
    let s: Awaited<ReturnType<typeof setUp>>;
    beforeAll(async () => {
      s = await setUp({ ERG_CANCEL_INLINE_RUNS: '5' });
    });
    afterAll(async () => {
      await s.t.close();
    });

    test('answers before the pending runs are cancelled, which follows in the background', async () => {
      const id = await s.campaign(60, 10);
      const res = await s.call('POST', `/v1/campaigns/${id}/cancel`);
      expect(res.status).toBe(202);
      expect(res.body.cancelling).toEqual({ pending: 50, active: 10 });
      // The answer shows the runs as they were: the pending ones not cancelled yet.
      expect(res.body).toMatchObject({ state: 'cancelling', runCounts: { pending: 50, queued: 10 } });
      await waitFor(
        async () => {
          const counts = (await runCountsByCampaign(s.t.db, [id])).get(id)?.byState ?? {};
          return counts['cancelled'] === 50;
        },
        { timeoutMs: 15_000, intervalMs: 100, what: 'the 50 pending runs to be cancelled' },
      );
      const after = await s.call('GET', `/v1/campaigns/${id}`);
      expect(after.body).toMatchObject({ state: 'cancelling', runCounts: { cancelled: 50, queued: 10 } });
      // Cancelled runs are never claimed for submission.
      expect(await claimRunsForSubmission(s.t.db, (await s.call('GET', '/v1/clusters/c1')).body.id, 100)).toEqual([]);
    });
  });
});
