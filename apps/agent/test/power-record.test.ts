import fs from 'node:fs';
import path from 'node:path';
import { PowerRecordSchema, TelemetryBatch } from '@erg/spec';
import type { PowerRecord } from '@erg/spec/node-info';
import { waitFor } from '@erg/testkit';
import { createLogger } from '../src/log';
import { POWER_RECORD_MAX_BYTES, readPowerRecord } from '../src/power-record';
import { AGENT_VERSION } from '../src/version';
import { agentArgs, cleanupTempDirs, copyFixtures, fakeApi, readSpool, spawnAgent, tempDir, writeToken, type AgentProcess } from './helpers';

// The node helper's power record (<node>.power.json, written into the telemetry folder before
// the agent starts) and the node's fingerprint: read once at start, sent with the first batch
// that declares the sensors — by every agent process, a resumed one too — and written to meta.json.
// The agent runs as a real process (the bundle) on the GH200 hwmon and procfs fixtures.

afterAll(cleanupTempDirs);

/** A record as the helper prints it: GPU power limits lowered to 300 W (values made up). */
const RECORD: PowerRecord = {
  ergPower: 1,
  ok: true,
  node: 'node1',
  job: '4242',
  requested: { gpuPowerLimitW: 300 },
  previous: { gpus: [{ index: 0, powerLimitW: 900 }] },
  applied: { gpus: [{ index: 0, powerLimitW: 300 }] },
  error: null,
};

describe('readPowerRecord', () => {
  const warnings: string[] = [];
  const log = createLogger('warn', (line) => void warnings.push(line));
  const file = (content: string | Buffer) => {
    const f = path.join(tempDir(), 'node1.power.json');
    fs.writeFileSync(f, content);
    return f;
  };
  beforeEach(() => void warnings.splice(0));

  test('the first line of the file is the record; absent is no record and no warning', () => {
    expect(readPowerRecord(file(`${JSON.stringify(RECORD)}\n`), log)).toEqual({ status: 'read', record: RECORD });
    const failed = { ...RECORD, ok: false, applied: null, error: 'nvidia-smi -pl 300: Insufficient Permissions' };
    expect(readPowerRecord(file(`${JSON.stringify(failed)}\nsomething after it\n`), log)).toEqual({ status: 'read', record: failed });
    expect(readPowerRecord(path.join(tempDir(), 'node1.power.json'), log)).toEqual({ status: 'absent', record: null });
    expect(warnings).toEqual([]);
  });

  test('ignored, with a warning, when it is not a record, larger than 64 KiB or unreadable', () => {
    expect(readPowerRecord(file('{"ergPower": 2}\n'), log)).toMatchObject({ status: 'ignored', record: null });
    expect(readPowerRecord(file('not json'), log)).toMatchObject({ status: 'ignored', record: null });
    const big = `${JSON.stringify({ ...RECORD, error: 'x'.repeat(POWER_RECORD_MAX_BYTES) })}\n`;
    expect(readPowerRecord(file(big), log)).toMatchObject({ status: 'ignored', reason: expect.stringContaining('larger than 65536') });
    const dir = path.join(tempDir(), 'node1.power.json');
    fs.mkdirSync(dir);
    expect(readPowerRecord(dir, log)).toMatchObject({ status: 'ignored', reason: expect.stringContaining('unreadable') });
    expect(warnings).toHaveLength(4);
    expect(warnings.every((w) => JSON.parse(w).event === 'power record ignored')).toBe(true);
  });

  test('a record whose own words are longer than the API takes is cut to fit (else the API would refuse the first batch)', () => {
    const read = readPowerRecord(file(`${JSON.stringify({ ...RECORD, ok: false, error: 'e'.repeat(5000) })}\n`), log);
    expect(read.record?.error).toHaveLength(2000);
    expect(PowerRecordSchema.safeParse(read.record).success).toBe(true);
  });
});

describe('the first batch of every agent process: fingerprint and power record (local API stand-in)', () => {
  type Api = Awaited<ReturnType<typeof fakeApi>>;
  let api: Api;
  const running: AgentProcess[] = [];
  beforeEach(async () => {
    api = await fakeApi();
  });
  afterEach(async () => {
    for (const a of running.splice(0)) if (a.child.exitCode === null && a.child.signalCode === null) a.child.kill('SIGKILL');
    await api.close();
  });
  async function start(spool: string, sysfs: string, extra: string[] = []): Promise<AgentProcess> {
    const token = writeToken(spool);
    const agent = await spawnAgent(
      agentArgs(spool, sysfs, ['--api-url', api.url, '--token-file', token, '--interval-ms', '50', '--batch-ms', '200', '--log-level', 'info', '--srun', '/nonexistent/srun', ...extra]),
      { LOADEDMODULES: 'gcc/12.3.0:cuda/12.4.1' },
    );
    running.push(agent);
    return agent;
  }
  const accepted = (batch: unknown) => {
    const r = TelemetryBatch.safeParse(batch);
    if (!r.success) throw new Error(JSON.stringify(r.error.issues.slice(0, 5)));
    return true;
  };

  test('sent with the batch that declares the sensors, not after; in meta.json; one start-up log line; again after a restart', async () => {
    const spool = tempDir();
    const sysfs = copyFixtures('gh200');
    fs.writeFileSync(path.join(spool, 'node1.power.json'), `${JSON.stringify(RECORD)}\n`);
    const first = await start(spool, sysfs);
    await waitFor(() => api.acked().length >= 3, { what: 'three acknowledged batches', timeoutMs: 15_000 });
    first.child.kill('SIGKILL'); // a crash: the next process resumes the spool
    await first.exited;

    const [b0, ...later] = readSpool(spool);
    expect(b0?.sensors).toBeDefined();
    expect(b0?.power).toEqual(RECORD);
    expect(b0?.fingerprint).toMatchObject({
      node: 'node1',
      cpuModel: 'Intel(R) Xeon(R) Platinum 8480+', // the procfs fixture's cpuinfo
      gpus: [],
      driverVersion: null,
      slurmVersion: null,
      modules: ['gcc/12.3.0', 'cuda/12.4.1'],
      workload: null,
      container: null,
      agentVersion: AGENT_VERSION,
    });
    expect(later.length).toBeGreaterThanOrEqual(2);
    expect(later.every((b) => b.fingerprint === undefined && b.power === undefined && b.sensors === undefined)).toBe(true);
    // What the API got is what was spooled, and its schema takes it.
    expect(api.requests[0]?.batch).toEqual(b0);
    expect(accepted(b0)).toBe(true);

    const meta = JSON.parse(fs.readFileSync(path.join(spool, 'node1.meta.json'), 'utf8'));
    expect(meta.fingerprint).toEqual(b0?.fingerprint);
    expect(meta.power).toEqual(RECORD);
    expect(meta.powerRecord).toEqual({ status: 'read' });
    const logged = first.stderr().split('\n').filter((l) => l.includes('"node fingerprint"')).map((l) => JSON.parse(l));
    expect(logged).toEqual([expect.objectContaining({ level: 'info', driver: null, gpus: [], powerRecord: { found: true, ok: true } })]);

    // The resumed process sends both again, on its own first batch.
    const resumedAt = readSpool(spool).length;
    const second = await start(spool, sysfs);
    await waitFor(() => readSpool(spool).length >= resumedAt + 3, { what: 'batches of the resumed agent', timeoutMs: 15_000 });
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    const [r0, ...rest] = readSpool(spool).slice(resumedAt);
    expect(r0?.seq).toBe(resumedAt);
    expect(r0?.sensors).toBeDefined();
    expect(r0?.fingerprint).toEqual(b0?.fingerprint);
    expect(r0?.power).toEqual(RECORD);
    expect(rest.every((b) => b.fingerprint === undefined && b.power === undefined)).toBe(true);
    expect(api.requests.filter((r) => r.batch.seq === resumedAt)[0]?.batch.fingerprint).toBeDefined();
  }, 45_000);

  test('without a record: the fingerprint alone; a bad record is ignored, said so in the log and in meta.json', async () => {
    const spool = tempDir();
    const agent = await start(spool, copyFixtures('gh200'));
    await waitFor(() => readSpool(spool).length >= 2, { what: 'two batches', timeoutMs: 15_000 });
    agent.child.kill('SIGTERM');
    await agent.exited;
    const [b0] = readSpool(spool);
    expect(b0?.fingerprint).toBeDefined();
    expect(b0 && 'power' in b0).toBe(false);
    expect(JSON.parse(fs.readFileSync(path.join(spool, 'node1.meta.json'), 'utf8'))).toMatchObject({ power: null, powerRecord: { status: 'absent' } });
    expect(agent.stderr()).toContain('"powerRecord":{"found":false}');

    const badSpool = tempDir();
    fs.writeFileSync(path.join(badSpool, 'node1.power.json'), '{"ok": true}\n');
    const bad = await start(badSpool, copyFixtures('gh200'));
    await waitFor(() => readSpool(badSpool).length >= 1, { what: 'a batch', timeoutMs: 15_000 });
    bad.child.kill('SIGTERM');
    await bad.exited;
    expect(readSpool(badSpool)[0]?.power).toBeUndefined();
    expect(readSpool(badSpool)[0]?.fingerprint).toBeDefined();
    expect(bad.stderr()).toContain('"event":"power record ignored"');
    expect(JSON.parse(fs.readFileSync(path.join(badSpool, 'node1.meta.json'), 'utf8')).powerRecord).toMatchObject({ status: 'ignored' });
  }, 45_000);
});
