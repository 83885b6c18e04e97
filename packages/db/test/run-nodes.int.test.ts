import { secretBoxFrom } from '@erg/secrets';
import type { NodeFingerprint, NormalizedBatch, PowerRecord } from '@erg/spec';
import { createTestDatabase, TEST_SECRET_KEY, type TestDatabase } from '@erg/testkit';
import {
  createCampaign, createDatabase, createProject, fingerprintClassId, fingerprintId, listCampaignRunNodes, listRunNodes, recordClusterCapabilities,
  findClusterByName, upsertCluster, TelemetryWriter, type Database,
} from '@erg/db';
import { poolOf } from '../src/client';
import { testCampaignSpec } from '@erg/db/testing';
import { testCluster } from './telemetry-fixture';

// Provenance arrives with telemetry: the batch that declares an agent's sensors carries its node's
// fingerprint and the node helper's power record. Stored once per distinct fingerprint, linked per
// run and node; a duplicate batch changes nothing.

const fingerprint = (node: string, driverVersion = '550.54.15'): NodeFingerprint => ({
  node, hostname: `${node}.cluster`, kernel: '6.8.0-1013-nvidia-64k', arch: 'arm64', cpuModel: 'ARM Neoverse-V2', cpuCount: 72,
  gpus: [{ index: 0, name: 'NVIDIA GH200 480GB', uuid: `GPU-${node}-0`, vbios: '96.00.9F.00.01' }],
  driverVersion, cudaVersion: '12.4', nvmlVersion: '12.550.54.15', slurmVersion: 'slurm 24.11.5', container: null, modules: ['cuda/12.4'],
  workload: null, agentVersion: '0.1.0',
});
const record: PowerRecord = {
  ergPower: 1, ok: true, node: 'gh-001', job: '42', requested: { gpuPowerLimitW: 300 },
  previous: { gpus: [{ index: 0, powerLimitW: 900 }] }, applied: { gpus: [{ index: 0, powerLimitW: 300 }] }, error: null,
};
const batch = (node: string, seq: number, extra: Partial<NormalizedBatch> = {}): NormalizedBatch => ({
  node, seq, sensors: [], sampleCount: 1, series: [{ sensor: 'gpu0.power', t: Float64Array.from([Date.now()]), v: Float64Array.from([300]) }], ...extra,
});

describe('run nodes: fingerprints and power records', () => {
  let tdb: TestDatabase;
  let db: Database;
  let runs: string[];
  let campaignId: string;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    const projectId = (await createProject(db, { name: 'nodes' })).id;
    const cluster = await testCluster(db, projectId);
    const campaign = await createCampaign(db, { name: 't', execution: 'slurm', clusterId: cluster.id, projectId, spec: testCampaignSpec(), specText: null, repetitions: 3, configurations: [{ key: 'a=1', parameters: { a: 1 } }] });
    campaignId = campaign.id;
    runs = campaign.runs.map((r) => r.id);
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  test('equal fingerprints are stored once, whatever their key order; each run links to its own', async () => {
    const writer = new TelemetryWriter(db);
    const reordered = Object.fromEntries(Object.entries(fingerprint('gh-001')).reverse()) as NodeFingerprint;
    await writer.write(runs[0]!, batch('gh-001', 0, { fingerprint: fingerprint('gh-001'), power: record }));
    await writer.write(runs[1]!, batch('gh-001', 0, { fingerprint: reordered }));
    await writer.write(runs[2]!, batch('gh-002', 0, { fingerprint: fingerprint('gh-002') }));
    const { rows } = await poolOf(db).query<{ n: string; classes: string }>('SELECT count(*) AS n, count(DISTINCT class_id) AS classes FROM node_fingerprints');
    // gh-001 twice (same content) and gh-002: two fingerprints, one kind of machine.
    expect(rows[0]).toEqual({ n: '2', classes: '1' });
    expect(fingerprintId(reordered)).toBe(fingerprintId(fingerprint('gh-001')));
    expect(fingerprintClassId(fingerprint('gh-001'))).toBe(fingerprintClassId(fingerprint('gh-002')));
    expect(fingerprintClassId(fingerprint('gh-001', '535.104.05'))).not.toBe(fingerprintClassId(fingerprint('gh-001')));

    const [node] = await listRunNodes(db, runs[0]!);
    expect(node).toEqual({ node: 'gh-001', fingerprintId: fingerprintId(fingerprint('gh-001')), fingerprintClassId: fingerprintClassId(fingerprint('gh-001')), fingerprint: fingerprint('gh-001'), power: record, clockOffsetMs: null, clockReadings: 0 });
    const byRun = await listCampaignRunNodes(db, campaignId);
    expect([...byRun.keys()].sort()).toEqual([...runs].sort());
    expect(byRun.get(runs[1]!)![0]!.power).toBeNull();
  });

  test('a later batch without provenance keeps it; a duplicate batch changes nothing; a resumed agent updates it', async () => {
    const writer = new TelemetryWriter(db);
    await writer.write(runs[0]!, batch('gh-001', 1));
    expect((await listRunNodes(db, runs[0]!))[0]!.power).toEqual(record);
    const dup = await writer.write(runs[0]!, batch('gh-001', 0, { fingerprint: fingerprint('gh-001', '999') }));
    expect(dup.duplicate).toBe(true);
    expect((await listRunNodes(db, runs[0]!))[0]!.fingerprint!.driverVersion).toBe('550.54.15');
    // Two batches of one node in one flush (an agent's spool pulled whole): the later seq wins, nothing is refused.
    await Promise.all([
      writer.write(runs[0]!, batch('gh-001', 7, { fingerprint: fingerprint('gh-001', '560.1') })),
      writer.write(runs[0]!, batch('gh-001', 6, { fingerprint: fingerprint('gh-001', '555.1') })),
    ]);
    expect((await listRunNodes(db, runs[0]!))[0]!.fingerprint!.driverVersion).toBe('560.1');
  });

  test("an agent's clock: the largest reading of its pushes is kept with their count, from the first push on", async () => {
    const writer = new TelemetryWriter(db);
    const node3 = async () => (await listRunNodes(db, runs[2]!)).find((n) => n.node === 'gh-003')!;
    // A node whose first push to arrive brings no provenance (seq 3 before seq 0)…
    await writer.write(runs[2]!, batch('gh-003', 3), -40);
    expect(await node3()).toMatchObject({ fingerprint: null, clockOffsetMs: -40, clockReadings: 1 });
    // …still gets its fingerprint from the older batch that brings it.
    await writer.write(runs[2]!, batch('gh-003', 0, { fingerprint: fingerprint('gh-003') }), -25);
    expect(await node3()).toMatchObject({ fingerprintId: fingerprintId(fingerprint('gh-003')), clockOffsetMs: -25, clockReadings: 2 });
    // A resent batch is a reading too; a smaller reading keeps the largest; a push without one changes nothing.
    expect((await writer.write(runs[2]!, batch('gh-003', 0), -30)).duplicate).toBe(true);
    await writer.write(runs[2]!, batch('gh-003', 4));
    expect(await node3()).toMatchObject({ clockOffsetMs: -25, clockReadings: 3 });
    await Promise.all([writer.write(runs[2]!, batch('gh-003', 5), 10), writer.write(runs[2]!, batch('gh-003', 6), 12)]);
    expect(await node3()).toMatchObject({ clockOffsetMs: 12, clockReadings: 5 });
    // Another node of the run keeps its own.
    expect((await listRunNodes(db, runs[2]!)).find((n) => n.node === 'gh-002')).toMatchObject({ clockOffsetMs: null, clockReadings: 0 });
  });

  test('a cluster keeps its probed capabilities while its login and helper stay; changing them asks for a new probe', async () => {
    const secrets = secretBoxFrom({ ERG_SECRET_KEY: TEST_SECRET_KEY });
    const c = (await findClusterByName(db, 'c1'))!;
    const caps = { probedAt: new Date().toISOString(), slurmVersion: 'slurm 22.05.8', powerHelper: { version: 1, knobs: ['gpuPowerLimitW' as const] }, powerHelperProblem: null };
    await recordClusterCapabilities(db, c.id, caps);
    const input = { projectId: c.projectId, name: 'c1', host: '127.0.0.1', port: 2222, username: 'root', privateKey: 'k', hostKeySha256: 'SHA256:x', workDir: '/w2' };
    expect((await upsertCluster(db, input, secrets)).capabilities).toEqual(caps);
    expect((await upsertCluster(db, { ...input, powerHelper: '/opt/erg/bin/erg-power-helper' }, secrets)).capabilities).toBeNull();
  });
});
