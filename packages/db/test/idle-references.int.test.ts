import type { IdleNodeFigures } from '@erg/spec';
import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import { createCampaign, createDatabase, createProject, listIdleReferences, storeRunEnergy, type Database } from '@erg/db';
import { setRunWindows, testCampaignSpec } from '@erg/db/testing';
import { testCluster } from './telemetry-fixture';

// What a cooldown compares each node with: the node's figures from the latest idle baseline erg
// measured on it, on the run's cluster, read from the stored figures of the most recent runs.

const NS = 1_000_000n;
const T = 1_796_000_000_000n; // ms since the epoch (2026-11-30)
const node = (name: string, powerW: number | null, gpus: IdleNodeFigures['gpus'] = []): IdleNodeFigures => ({ node: name, powerW, coverage: 1, method: 'integrated', gpus });

describe('listIdleReferences', () => {
  let tdb: TestDatabase;
  let db: Database;
  let clusterId: string;
  let otherClusterId: string;
  const runs: string[] = [];
  const elsewhere: string[] = [];

  /** A run's idle baseline ending `endMs` after T, and its stored figures with `idle` (null: figures without one). */
  async function measured(runId: string, endMs: bigint | null, idle: { nodes?: IdleNodeFigures[] } | null): Promise<void> {
    const idleEndNs = endMs === null ? null : (T + endMs) * NS;
    await setRunWindows(db, runId, { idleStartNs: idleEndNs === null ? null : idleEndNs - 5_000n * NS, idleEndNs, workloadStartNs: (T + 100_000n) * NS, workloadEndNs: (T + 110_000n) * NS });
    const result = { timeS: 10, energyJ: 1000, ...(idle ? { idle: { powerW: 0, energyJ: 0, netEnergyJ: 0, coverage: 1, method: 'integrated', ...idle } } : {}) };
    await storeRunEnergy(db, runId, { timeS: 10, energyJ: 1000, method: 'integrated', coverage: 1, result }, 1);
  }

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    const projectId = (await createProject(db, { name: 'idle' })).id;
    clusterId = (await testCluster(db, projectId)).id;
    otherClusterId = (await testCluster(db, projectId, 'c2')).id;
    const campaign = (id: string, repetitions: number) =>
      createCampaign(db, { name: 't', execution: 'slurm', clusterId: id, projectId, spec: testCampaignSpec(), specText: null, repetitions, configurations: [{ key: 'a=1', parameters: { a: 1 } }] });
    runs.push(...(await campaign(clusterId, 4)).runs.map((r) => r.id));
    elsewhere.push(...(await campaign(otherClusterId, 1)).runs.map((r) => r.id));

    await measured(runs[0]!, 1_000n, { nodes: [node('n1', 300, [{ gpu: 0, meanTempC: 41, maxTempC: 44 }]), node('n2', 250)] });
    await measured(runs[1]!, 2_000n, { nodes: [node('n1', 200, [{ gpu: 0, meanTempC: 33.5, maxTempC: 35 }, { gpu: 1, meanTempC: 34, maxTempC: 36 }]), node('n3', null)] });
    // Later, but no per-node figures (computed before erg kept them), or no idle window at all: not references.
    await measured(runs[2]!, 3_000n, {});
    await measured(runs[3]!, null, { nodes: [node('n1', 1)] });
    // The latest of all, on another cluster: node names are the cluster's own.
    await measured(elsewhere[0]!, 4_000n, { nodes: [node('n1', 999)] });
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  test("each node's latest idle figures on the cluster, the most recently measured first, with the run and time they come from", async () => {
    expect(await listIdleReferences(db, clusterId)).toEqual([
      { node: 'n1', powerW: 200, gpus: [{ gpu: 0, tempC: 33.5 }, { gpu: 1, tempC: 34 }], runId: runs[1], measuredAt: new Date(Number(T + 2_000n)).toISOString() },
      { node: 'n3', powerW: null, gpus: [], runId: runs[1], measuredAt: new Date(Number(T + 2_000n)).toISOString() },
      { node: 'n2', powerW: 250, gpus: [], runId: runs[0], measuredAt: new Date(Number(T + 1_000n)).toISOString() },
    ]);
    expect((await listIdleReferences(db, otherClusterId)).map((r) => [r.node, r.powerW])).toEqual([['n1', 999]]);
  });

  test('bounded: only the most recent runs with a baseline are read, and at most the nodes asked for are returned', async () => {
    // The latest run alone: n2's figure is in an older one.
    expect((await listIdleReferences(db, clusterId, { runs: 1 })).map((r) => r.node)).toEqual(['n1', 'n3']);
    expect((await listIdleReferences(db, clusterId, { nodes: 1 })).map((r) => r.node)).toEqual(['n1']);
  });

  test('a cluster with no run measured idle has none', async () => {
    const projectId = (await createProject(db, { name: 'empty' })).id;
    const empty = await testCluster(db, projectId, 'c3');
    expect(await listIdleReferences(db, empty.id)).toEqual([]);
  });
});
