// GET /v1/campaigns/{id}/results at any size (issue 27 §1): computed in a results worker thread,
// not on the API's event loop (counted by source in /metrics); kept for the next read and never
// served after anything it was computed from changed; reads of results another request is
// computing wait for it; at most ERG_EXPENSIVE_READS_PER_TOKEN computations and evidence bundles
// per token at once (429 beyond); a search campaign's untried candidates counted and paged, not
// listed. Sizes are small: the large ones are bench/hostile-reads.js's. Needs the build: the
// results workers run from apps/api/dist (npx turbo run build).
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { z } from 'zod';
import { createApiToken, storeRunEnergy } from '@erg/db';
import { forceRunEnd } from '@erg/db/testing';
import { BUNDLE_FILES, parseExact } from '@erg/evidence';
import { campaignFiguresOf, campaignResultsView, type CampaignFigureInputs } from '@erg/results';
import { CampaignResults } from '@erg/spec';
import { adaptCampaign } from '@erg/strategy';
import { parsePrometheusText, sampleValue, waitFor } from '@erg/testkit';
import { Offload } from '../src/offload';
import { apiRequests, completeRun, startTestApi, type TestApi } from './helpers';

const key = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const CLUSTER = { name: 'nowhere', host: '127.0.0.1', port: 2222, user: 'root', privateKey: key, hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/var/lib/erg-test' };

/** Holds every results computation that reaches it until released (the reader's beforeCompute seam). */
class Gate {
  readonly waiting: string[] = [];
  private open = true;
  private releases: (() => void)[] = [];
  /** Run as each computation starts, before it is held. */
  during: ((campaignId: string) => Promise<void>) | undefined;
  hold = async (campaignId: string): Promise<void> => {
    await this.during?.(campaignId);
    if (this.open) return;
    this.waiting.push(campaignId);
    await new Promise<void>((resolve) => this.releases.push(resolve));
  };
  close(): void {
    this.open = false;
    this.waiting.length = 0;
  }
  release(): void {
    this.open = true;
    for (const resolve of this.releases.splice(0)) resolve();
  }
}

describe('campaign results reads (Postgres + Redis, results workers)', () => {
  let t: TestApi;
  const gate = new Gate();
  const { call, ok } = apiRequests(() => t);

  beforeAll(async () => {
    t = await startTestApi({ ERG_EXPENSIVE_READS_PER_TOKEN: '2' }, { beforeResultsCompute: gate.hold });
    await ok('POST', '/v1/clusters', CLUSTER);
  });
  afterAll(async () => {
    gate.release();
    await t.close();
  });

  /** Results answers so far, by source (erg_campaign_results_total). */
  async function answered(): Promise<Record<string, number>> {
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    const samples = parsePrometheusText(res.body);
    return Object.fromEntries(['cache', 'joined', 'worker', 'inline'].map((source) => [source, sampleValue(samples, 'erg_campaign_results_total', { source }) ?? 0]));
  }

  /** An import campaign of `configurations` × 2 runs, each run completed with time 10 + a and energy 100 × (a + 1) but the last `pending`. */
  async function measuredCampaign(name: string, configurations = 3, pending = 0): Promise<{ id: string; runs: { id: string; configurationKey: string }[] }> {
    const created = await ok('POST', '/v1/campaigns?project=default', {
      name, execution: 'import', repetitions: 2, parameters: { a: Array.from({ length: configurations }, (_, i) => i) },
    });
    for (const run of (created.runs as { id: string; configurationKey: string }[]).slice(0, created.runs.length - pending)) {
      const a = Number(run.configurationKey.split('=')[1]);
      await completeRun(t.db, run.id, 10 + a, 100 * (a + 1));
    }
    return created;
  }

  /** What the results view computes, as JSON: the figures the answer must hold exactly. */
  async function expected(campaignId: string): Promise<unknown> {
    return JSON.parse(JSON.stringify(z.encode(CampaignResults, { campaignId, ...(await campaignResultsView(t.db, campaignId)) } as CampaignResults)));
  }

  test('the results are computed in a worker thread, never on the event loop, with the figures the view computes', async () => {
    const campaign = await measuredCampaign('in-a-worker');
    const before = await answered();
    const res = await t.app.inject({ method: 'GET', url: `/v1/campaigns/${campaign.id}/results`, headers: { authorization: `Bearer ${t.token}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual(await expected(campaign.id));
    const after = await answered();
    expect(after.worker - before.worker).toBe(1);
    expect(after.inline).toBe(0);
  });

  test('kept for the next read, and computed again after every change to what it was computed from', async () => {
    const campaign = await measuredCampaign('kept', 3, 1);
    const url = `/v1/campaigns/${campaign.id}/results`;
    const first = await ok('GET', url);
    let before = await answered();
    expect(await ok('GET', url)).toEqual(first);
    let after = await answered();
    expect([after.cache - before.cache, after.worker - before.worker]).toEqual([1, 0]);

    // The scheduler's recompute of a run's figures (late telemetry): the new energy is in the next answer.
    const run = campaign.runs[0]!;
    await storeRunEnergy(t.db, run.id, { timeS: 10, energyJ: 7000, method: 'integrated', coverage: 1, result: { timeS: 10, energyJ: 7000, coverage: 1, components: {}, flags: [] } }, 2);
    before = after;
    const recomputed = await ok('GET', url);
    after = await answered();
    expect(after.worker - before.worker).toBe(1);
    expect(recomputed).toEqual(await expected(campaign.id));
    const maxEnergy = (r: { configurations: { key: string; energyJ: { max: number } }[] }) => r.configurations.find((c) => c.key === run.configurationKey)!.energyJ.max;
    expect(maxEnergy(first)).toBeLessThan(1000);
    expect(maxEnergy(recomputed)).toBe(7000);

    // Another campaign's run finishing changes nothing of this one's: still kept.
    const more = await ok('POST', `/v1/campaigns?project=default`, { name: 'kept-2', execution: 'import', parameters: { a: [0] } });
    await ok('POST', `/v1/runs/${more.runs[0].id}/finish`, { startedAt: new Date(Date.now() - 60_000).toISOString(), endedAt: new Date().toISOString() });
    expect(await ok('GET', url)).toEqual(recomputed);
    before = after;
    after = await answered();
    expect([after.cache - before.cache, after.worker - before.worker]).toEqual([1, 0]);

    // Its own last run finished over HTTP: counted at once.
    const last = campaign.runs.at(-1)!;
    await ok('POST', `/v1/runs/${last.id}/finish`, { startedAt: new Date(Date.now() - 60_000).toISOString(), endedAt: new Date().toISOString() });
    const finished = await ok('GET', url);
    const nOf = (r: { configurations: { key: string; n: number }[] }) => r.configurations.find((c) => c.key === last.configurationKey)!.n;
    expect([nOf(recomputed), nOf(finished)]).toEqual([1, 2]);
    expect(finished).toEqual(await expected(campaign.id));
  });

  test("a read of results another request is computing waits for it; one token's computations beyond its limit are refused, bundles included", async () => {
    const [x, y, z2] = [await measuredCampaign('x'), await measuredCampaign('y'), await measuredCampaign('z')];
    const other = (await createApiToken(t.db, 'other')).token;
    const get = (url: string, token = t.token) => t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
    const before = await answered();
    gate.close();
    const held = [get(`/v1/campaigns/${x.id}/results`), get(`/v1/campaigns/${y.id}/results`)];
    await waitFor(() => gate.waiting.length === 2, { timeoutMs: 10_000, what: 'two computations at the gate' });
    // The same results as one in progress: no place taken, no computation started.
    const joining = get(`/v1/campaigns/${x.id}/results`);
    // A third computation for the same token, and an evidence bundle: refused at once.
    const refused = await get(`/v1/campaigns/${z2.id}/results`);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('2');
    expect(refused.json().error).toMatchObject({ code: 'ERG_RATE_LIMITED', message: expect.stringMatching(/already has 2 campaign results or evidence bundles being made/) });
    expect((await get(`/v1/campaigns/${x.id}/export`)).statusCode).toBe(429);
    // Another token has places of its own.
    const others = get(`/v1/campaigns/${z2.id}/results`, other);
    await waitFor(() => gate.waiting.length === 3, { timeoutMs: 10_000, what: "the other token's computation at the gate" });
    expect(gate.waiting.sort()).toEqual([x.id, y.id, z2.id].sort());
    gate.release();
    const answers = await Promise.all([...held, joining, others]);
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
    expect(answers[2]!.body).toBe(answers[0]!.body);
    const after = await answered();
    expect([after.worker - before.worker, after.joined - before.joined]).toEqual([3, 1]);
    // The places are free again: two more computations (other groupings of x and y) at once.
    const again = await Promise.all([get(`/v1/campaigns/${x.id}/results?groupBy=fingerprint`), get(`/v1/campaigns/${y.id}/results?groupBy=fingerprint`)]);
    expect(again.map((r) => r.statusCode)).toEqual([200, 200]);
    expect((await answered()).worker - after.worker).toBe(2);
  });

  test("a search campaign's untried candidates are counted and paged, not listed; the figures stay as the view computes them", async () => {
    const created = await ok('POST', '/v1/campaigns', {
      name: 'search', cluster: 'nowhere', run: 'true', parameters: { clock: [600, 900, 1200, 1500, 1800], batch: [8, 16, 32, 64] },
      strategy: { kind: 'search', parallel: 4, initialConfigurations: 4, budget: { maxRuns: 8 } },
    });
    expect(created.configurations).toHaveLength(20);
    await adaptCampaign(t.db, created.id);
    const runs = (await ok('GET', `/v1/campaigns/${created.id}/runs`)).items as { id: string; configurationKey: string }[];
    expect(runs).toHaveLength(4);
    // Three measured, one in flight: 17 candidates without a completed run.
    for (const [i, r] of runs.slice(0, 3).entries()) await completeRun(t.db, r.id, 10 + i, 100 - i);
    const measured = runs.slice(0, 3).map((r) => r.configurationKey).sort();

    const results = await ok('GET', `/v1/campaigns/${created.id}/results`);
    const list = `/v1/campaigns/${created.id}/configurations?measured=false`;
    expect(results.unmeasured).toEqual({ configurations: 17, list });
    expect(results.configurations.map((c: { key: string }) => c.key).sort()).toEqual(measured);
    expect(results.excluded).toEqual([]);
    // Every other member is the view's own.
    const full = (await expected(created.id)) as Record<string, unknown>;
    const { configurations: _c, excluded: _e, unmeasured: _u, ...rest } = results;
    const { configurations: fullConfigurations, excluded: fullExcluded, ...fullRest } = full as { configurations: { n: number }[]; excluded: unknown[] };
    expect(rest).toEqual(fullRest);
    expect(fullConfigurations).toHaveLength(20);
    expect(fullExcluded).toHaveLength(17);

    // The link pages through them; `measured=true` gives the others.
    const page = await ok('GET', list);
    expect(page.total).toBe(17);
    expect(page.items).toHaveLength(17);
    expect(page.items.every((c: { key: string; completedRuns: number }) => !measured.includes(c.key) && c.completedRuns === 0)).toBe(true);
    const last = await ok('GET', `${list}&limit=5&offset=15`);
    expect([last.total, last.items.length]).toEqual([17, 2]);
    expect(await ok('GET', `${list}&limit=5&offset=40`)).toEqual({ items: [], total: 17 });
    const tried = await ok('GET', `/v1/campaigns/${created.id}/configurations?measured=true`);
    expect(tried.items.map((c: { key: string }) => c.key).sort()).toEqual(measured);
    expect((await call('GET', `/v1/campaigns/${created.id}/configurations?measured=maybe`)).status).toBe(400);

    // A grid campaign lists every configuration, measured or not, as before.
    const grid = await ok('POST', '/v1/campaigns?project=default', { name: 'grid', execution: 'import', parameters: { a: [1, 2, 3] } });
    const gridResults = await ok('GET', `/v1/campaigns/${grid.id}/results`);
    expect(gridResults.configurations).toHaveLength(3);
    expect('unmeasured' in gridResults).toBe(false);
  });

  test("an evidence bundle's results.json is the results route's answer, byte for byte: computed in a worker or kept, never on the event loop", async () => {
    const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${t.token}` } });
    /** results.json of the campaign's bundle, as the archive holds it. */
    const bundled = async (campaignId: string): Promise<Buffer> => {
      const res = await get(`/v1/campaigns/${campaignId}/export`);
      expect(res.statusCode).toBe(200);
      return execFileSync('tar', ['-xOf', '-', BUNDLE_FILES.results], { input: res.rawPayload });
    };
    // Runs completed without figures (a bundle holds each run's figures as the energy route shows them, which completeRun's are not).
    const campaign = await ok('POST', '/v1/campaigns?project=default', { name: 'bundled', execution: 'import', repetitions: 2, parameters: { a: [0, 1] } });
    for (const run of campaign.runs.slice(1)) await forceRunEnd(t.db, run.id, 'completed');
    let before = await answered();
    const first = await bundled(campaign.id);
    let after = await answered();
    expect([after.worker - before.worker, after.inline]).toEqual([1, 0]);
    // The route answers the very bytes, kept from the bundle's computation; the next bundle takes them too.
    const route = await get(`/v1/campaigns/${campaign.id}/results`);
    expect(route.rawPayload.equals(first)).toBe(true);
    expect(await bundled(campaign.id)).toEqual(first);
    [before, after] = [after, await answered()];
    expect([after.cache - before.cache, after.worker - before.worker]).toEqual([2, 0]);

    // After a change: computed again (in the worker), with the change in it.
    await forceRunEnd(t.db, campaign.runs[0].id, 'completed');
    const changed = await bundled(campaign.id);
    [before, after] = [after, await answered()];
    expect([after.worker - before.worker, after.inline]).toEqual([1, 0]);
    expect(changed.equals(first)).toBe(false);
    expect(JSON.parse(changed.toString('utf8'))).toEqual(await expected(campaign.id));
  });

  test("a campaign that changes under each of a bundle's reads: its inputs and results are made from one read, in the evidence worker", async () => {
    const campaign = await ok('POST', '/v1/campaigns?project=default', { name: 'changing', execution: 'import', repetitions: 2, parameters: { a: [0, 1] } });
    const pending = [...(campaign.runs as { id: string }[])];
    // Every computation of its results sees one more run completed than the inputs read before it.
    gate.during = async (id) => {
      if (id === campaign.id && pending.length > 0) await forceRunEnd(t.db, pending.shift()!.id, 'completed');
    };
    const before = await answered();
    const jobs = jest.spyOn(Offload.prototype, 'run');
    let tar: Buffer;
    let files: unknown[];
    try {
      const res = await t.app.inject({ method: 'GET', url: `/v1/campaigns/${campaign.id}/export`, headers: { authorization: `Bearer ${t.token}` } });
      expect(res.statusCode).toBe(200);
      tar = res.rawPayload;
    } finally {
      gate.during = undefined;
      files = jobs.mock.calls.map(([job]) => job).filter((job) => job.kind === 'campaign-files');
      jobs.mockRestore();
    }
    // Two tries, each its inputs read in the evidence worker and its results computed in a results worker; then both at once.
    expect((await answered()).worker - before.worker).toBe(2);
    expect(files.map((job) => (job as { results: unknown }).results !== null)).toEqual([false, false, true]);
    const member = (name: string) => execFileSync('tar', ['-xOf', '-', name], { input: tar }).toString('utf8');
    const inputs = parseExact(member(BUNDLE_FILES.campaignInputs)) as CampaignFigureInputs;
    const results = JSON.parse(member(BUNDLE_FILES.results));
    // Read after the second change: two runs completed, and the results are theirs.
    expect(results.configurations.reduce((n: number, c: { n: number }) => n + c.n, 0)).toBe(2);
    expect(results).toEqual(JSON.parse(JSON.stringify(z.encode(CampaignResults, { campaignId: campaign.id, ...campaignFiguresOf(inputs) } as CampaignResults))));
  });
});
