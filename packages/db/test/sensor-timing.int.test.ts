import type { NormalizedBatch, SensorDescription } from '@erg/spec';
import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import { createDatabase, readRunSensors, TelemetryWriter, type Database } from '@erg/db';
import { oneSampleBatch, slurmRuns } from './telemetry-fixture';

// A sensor's timing (issue 15 §2) travels in the batch's sensor descriptions and is stored with
// them in telemetry_sensors: averagingMs (averaging_ms) and updateMs (update_ms), null when the
// agent did not say. The API's ingest and the scheduler's spool pull both store through this
// TelemetryWriter.

const t0 = Date.now();
const batch = (node: string, seq: number, sensors: SensorDescription[]): NormalizedBatch => oneSampleBatch(t0, node, seq, { sensors });

describe('sensor timing in telemetry_sensors', () => {
  let tdb: TestDatabase;
  let db: Database;
  let writer: TelemetryWriter;
  let runs: string[];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    writer = new TelemetryWriter(db);
    runs = await slurmRuns(db, 'timing', 4);
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  test('averagingMs and updateMs round-trip; a sensor declared without them reads null', async () => {
    const run = runs[0]!;
    await writer.write(run, batch('gh-001', 0, [
      { sensor: 'module0.power', source: 'hwmon', unit: 'W', scope: 'module', averagingMs: 50 },
      { sensor: 'gpu0.power', source: 'nvml', unit: 'W', scope: 'gpu', averagingMs: 1000 },
      { sensor: 'module0.energy', source: 'nvml', unit: 'J', scope: 'module', updateMs: 20.25 },
      { sensor: 'gpu0.util', source: 'nvml', unit: '%', scope: 'gpu' },
    ]));
    expect(await readRunSensors(db, run)).toEqual([
      { node: 'gh-001', sensor: 'gpu0.power', source: 'nvml', unit: 'W', scope: 'gpu', wrapAt: null, averagingMs: 1000, updateMs: null },
      { node: 'gh-001', sensor: 'gpu0.util', source: 'nvml', unit: '%', scope: 'gpu', wrapAt: null, averagingMs: null, updateMs: null },
      { node: 'gh-001', sensor: 'module0.energy', source: 'nvml', unit: 'J', scope: 'module', wrapAt: null, averagingMs: null, updateMs: 20.25 },
      { node: 'gh-001', sensor: 'module0.power', source: 'hwmon', unit: 'W', scope: 'module', wrapAt: null, averagingMs: 50, updateMs: null },
    ]);
  });

  test('a batch from an older agent (descriptions without timing) stores nulls', async () => {
    const run = runs[1]!;
    await writer.write(run, batch('n1', 0, [{ sensor: 'cpu0.energy', source: 'rapl', unit: 'J', wrapAt: 262143.32885 }, { sensor: 'gpu0.power', source: 'nvml', unit: 'W' }]));
    expect(await readRunSensors(db, run)).toEqual([
      { node: 'n1', sensor: 'cpu0.energy', source: 'rapl', unit: 'J', scope: null, wrapAt: 262143.32885, averagingMs: null, updateMs: null },
      { node: 'n1', sensor: 'gpu0.power', source: 'nvml', unit: 'W', scope: null, wrapAt: null, averagingMs: null, updateMs: null },
    ]);
  });

  test('a sensor declared again keeps the latest declaration whole (the rule for every field): a new interval replaces the old, none clears it', async () => {
    const run = runs[2]!;
    const meter = (averagingMs?: number): SensorDescription => ({ sensor: 'module0.power', source: 'hwmon', unit: 'W', scope: 'module', ...(averagingMs !== undefined ? { averagingMs } : {}) });
    const stored = async () => (await readRunSensors(db, run)).map((s) => s.averagingMs);
    await writer.write(run, batch('gh-001', 0, [meter(50)]));
    // The agent restarted after power1_average_interval was set to 1000 ms: its first batch says so.
    await writer.write(run, batch('gh-001', 1, [meter(1000)]));
    expect(await stored()).toEqual([1000]);
    // Declared again without it (an older agent binary): the column follows, as scope and wrapAt do.
    await writer.write(run, batch('gh-001', 2, [meter()]));
    expect(await stored()).toEqual([null]);
    // The declaration is upserted even from a batch already stored (a resent seq): latest written wins.
    const again = await writer.write(run, batch('gh-001', 0, [meter(50)]));
    expect(again.duplicate).toBe(true);
    expect(await stored()).toEqual([50]);
  });

  test('two batches in one flush declaring the same sensor differently: the later one is kept', async () => {
    const run = runs[3]!;
    const energy = (updateMs: number): SensorDescription => ({ sensor: 'module0.energy', source: 'nvml', unit: 'J', scope: 'module', updateMs });
    // One flush at a time: the first write takes the slot, the next two queue and are flushed together.
    const serial = new TelemetryWriter(db, { concurrency: 1 });
    await Promise.all([
      serial.write(run, batch('gh-001', 0, [])),
      serial.write(run, batch('gh-001', 1, [energy(20)])),
      serial.write(run, batch('gh-001', 2, [energy(100)])),
    ]);
    expect((await readRunSensors(db, run)).map((s) => s.updateMs)).toEqual([100]);
  });
});
