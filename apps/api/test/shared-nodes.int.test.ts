import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { forceRunEnd, setRunJob, setRunWindows } from '@erg/db/testing';
import { openEvidenceBundle, verifyBundle } from '@erg/evidence';
import { readRunFigureInputs, refreshRunEnergy, runFiguresOf } from '@erg/results';
import { expandHostlist } from '@erg/slurm/hostlist';
import { startTestApi, type TestApi } from './helpers';

// No Slurm here: the test plays the scheduler's part — it records each run's job (node list, start,
// end) and windows as a poll and job.sh would have — and posts each run's telemetry as its agent
// would. Two campaigns' jobs overlap on node gh002 during one run's window.
const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const CLUSTER = {
  name: 'shared', host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY,
  hostKeySha256: 'SHA256:' + 'A'.repeat(43), defaultPartition: 'gh200', workDir: '/var/lib/erg-test',
};
const ns = (ms: number) => BigInt(Math.round(ms)) * 1_000_000n;

describe('runs that share a node (Postgres + Redis)', () => {
  let t: TestApi;
  async function call(method: string, url: string, body?: unknown) {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${t.token}` }, ...(body ? { payload: body as object } : {}) });
    return { status: res.statusCode, body: JSON.parse(res.body) };
  }

  /** A finished run: its job on `nodeList` during [jobFrom, jobTo], idle [idleFrom, workFrom], workload [workFrom, workTo], 200 W on each node's module0. */
  async function finishedRun(runId: string, nodeList: string, times: { jobFrom: number; idleFrom: number; workFrom: number; workTo: number; jobTo: number }) {
    await setRunJob(t.db, runId, { nodeList, startedAt: new Date(times.jobFrom), endedAt: new Date(times.jobTo) });
    await setRunWindows(t.db, runId, { idleStartNs: ns(times.idleFrom), idleEndNs: ns(times.workFrom), workloadStartNs: ns(times.workFrom), workloadEndNs: ns(times.workTo) });
    const ts = Array.from({ length: Math.round((times.jobTo - times.jobFrom) / 100) + 1 }, (_, i) => times.jobFrom + i * 100);
    // Every node of the job reports (a node that sent nothing would flag the run missing_node).
    for (const node of expandHostlist(nodeList)!) {
      expect((await call('POST', `/v1/runs/${runId}/telemetry`, { node, seq: 0, samples: [{ sensor: 'module0.power', t: ts, v: ts.map(() => 200) }] })).status).toBe(200);
    }
    await forceRunEnd(t.db, runId, 'completed');
    await setRunJob(t.db, runId, { nodeList, startedAt: new Date(times.jobFrom), endedAt: new Date(times.jobTo) });
  }

  beforeAll(async () => {
    t = await startTestApi();
    expect((await call('POST', '/v1/clusters', CLUSTER)).status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
  });

  test('a run whose node another job used during its window is flagged shared_node, its neighbours\' only where they overlapped, and the results count it', async () => {
    const spec = { name: 'sharing', cluster: 'shared', repetitions: 1, parameters: { a: [1, 2, 3] }, run: 'true' };
    const created = await call('POST', '/v1/campaigns', spec);
    expect(created.status).toBe(201);
    const [alone, victim, neighbour] = created.body.runs as { id: string; configurationKey: string }[];
    const t0 = Date.now() - 300_000; // inside the window of sample times the API accepts for a run created now
    // alone: gh001 only, long before the others; victim: gh[002-003]; neighbour: gh002, starting during victim's workload.
    await finishedRun(alone!.id, 'gh001', { jobFrom: t0, idleFrom: t0 + 1000, workFrom: t0 + 2000, workTo: t0 + 12_000, jobTo: t0 + 13_000 });
    await finishedRun(victim!.id, 'gh[002-003]', { jobFrom: t0 + 100_000, idleFrom: t0 + 101_000, workFrom: t0 + 102_000, workTo: t0 + 112_000, jobTo: t0 + 113_000 });
    await finishedRun(neighbour!.id, 'gh002', { jobFrom: t0 + 105_000, idleFrom: t0 + 106_000, workFrom: t0 + 107_000, workTo: t0 + 117_000, jobTo: t0 + 118_000 });
    for (const r of [alone, victim, neighbour]) await refreshRunEnergy(t.db, r!.id);

    const energyOf = async (id: string) => (await call('GET', `/v1/runs/${id}/energy`)).body;
    const a = await energyOf(alone!.id);
    const v = await energyOf(victim!.id);
    const n = await energyOf(neighbour!.id);
    expect(a.flags).toEqual([]);
    expect(v.flags).toEqual(['shared_node']);
    expect(v.warnings).toContain('shared node(s) gh002 with 1 other job(s) during its window: node-level sensors (module, Grace, RAPL package, the power model) also measured their work, so its energy includes theirs');
    // The neighbour's idle baseline and workload both overlap the victim's job.
    expect(n.flags).toEqual(['shared_node', 'shared_idle_baseline']);

    const results = (await call('GET', `/v1/campaigns/${created.body.id}/results`)).body;
    const flagged = Object.fromEntries(results.configurations.map((c: { key: string; flaggedRuns: Record<string, number> }) => [c.key, c.flaggedRuns]));
    expect(flagged).toEqual({
      [alone!.configurationKey]: {}, [victim!.configurationKey]: { shared_node: 1 }, [neighbour!.configurationKey]: { shared_node: 1, shared_idle_baseline: 1 },
    });
  });

  test('back-to-back jobs on one node are not flagged, though Slurm\'s whole-second times touch', async () => {
    const created = await call('POST', '/v1/campaigns', { name: 'in-turn', cluster: 'shared', repetitions: 2, parameters: {}, run: 'true', resources: { exclusive: true } });
    const [first, second] = created.body.runs as { id: string }[];
    const t0 = Math.floor((Date.now() - 200_000) / 1000) * 1000;
    // first's workload ends at t0 + 10.8 s; second's job starts right after, which Slurm reports as
    // t0 + 10 s (whole seconds). second has no measured windows (its job script never wrote them),
    // so only Slurm's times say when it was there.
    await finishedRun(first!.id, 'gh009', { jobFrom: t0, idleFrom: t0 + 500, workFrom: t0 + 1500, workTo: t0 + 10_800, jobTo: t0 + 11_000 });
    await setRunJob(t.db, first!.id, { nodeList: 'gh009', startedAt: new Date(t0), endedAt: new Date(t0 + 10_000) });
    await setRunJob(t.db, second!.id, { nodeList: 'gh009', startedAt: new Date(t0 + 10_000), endedAt: new Date(t0 + 21_000) });
    await refreshRunEnergy(t.db, first!.id);
    expect((await call('GET', `/v1/runs/${first!.id}/energy`)).body.flags).toEqual([]);
  });

  test("a neighbour that finished after the run's figures were computed: they keep it, and the campaign's evidence bundle verifies", async () => {
    const victim = (await call('POST', '/v1/campaigns', { name: 'kept', cluster: 'shared', repetitions: 1, parameters: {}, run: 'true' })).body;
    const other = (await call('POST', '/v1/campaigns', { name: 'next-door', cluster: 'shared', repetitions: 1, parameters: {}, run: 'true' })).body;
    const runId = victim.runs[0].id as string;
    const neighbourId = other.runs[0].id as string;
    const t0 = Date.now() - 250_000;
    await finishedRun(runId, 'gh[020-021]', { jobFrom: t0, idleFrom: t0 + 1000, workFrom: t0 + 2000, workTo: t0 + 12_000, jobTo: t0 + 13_000 });
    // Still running when the figures are computed: Slurm says it started during the workload, so it
    // counts as busy from then until now.
    await setRunJob(t.db, neighbourId, { nodeList: 'gh020', startedAt: new Date(t0 + 5000), endedAt: null });
    await refreshRunEnergy(t.db, runId);
    expect((await call('GET', `/v1/runs/${runId}/energy`)).body.flags).toEqual(['shared_node']);

    // It finishes: its job script measured its windows after the run's, so read now it no longer
    // overlaps — and the run's figures are not stale (nothing of the run changed).
    await setRunWindows(t.db, neighbourId, { idleStartNs: ns(t0 + 20_000), idleEndNs: ns(t0 + 21_000), workloadStartNs: ns(t0 + 21_000), workloadEndNs: ns(t0 + 30_000) });
    await setRunJob(t.db, neighbourId, { nodeList: 'gh020', startedAt: new Date(t0 + 5000), endedAt: new Date(t0 + 31_000) });
    const now = await readRunFigureInputs(t.db, runId);
    if (typeof now === 'string') throw new Error(now);
    expect(runFiguresOf(now)!.flags).toEqual([]);
    expect((await call('GET', `/v1/runs/${runId}/energy`)).body.stale).toBe(false);

    const exported = await t.app.inject({ method: 'GET', url: `/v1/campaigns/${victim.id}/export`, headers: { authorization: `Bearer ${t.token}` } });
    expect(exported.statusCode).toBe(200);
    const dir = mkdtempSync(path.join(tmpdir(), 'erg-shared-nodes-'));
    try {
      writeFileSync(path.join(dir, 'bundle.tar'), exported.rawPayload);
      const bundle = await openEvidenceBundle(path.join(dir, 'bundle.tar'));
      expect(bundle.runInputs(runId)!.neighbours).toEqual([expect.objectContaining({ runId: neighbourId, nodeList: 'gh020', busyFromMs: t0 + 6000 })]);
      const report = verifyBundle(bundle);
      expect(report.differences).toEqual([]);
      expect([report.runsRecomputed, report.resultsRecomputed]).toEqual([1, true]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
