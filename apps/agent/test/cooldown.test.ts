import fs from 'node:fs';
import path from 'node:path';
import { waitFor } from '@erg/testkit';
import { cooldownPlanText, type CooldownPlan, type IdleReference } from '@erg/spec/cooldown-plan';
import { NodeCooldown } from '@erg/spec';
import { cooldownVerdict, type CooldownReading } from '../src/cooldown-decision';
import { CooldownWatch, EVALUATE_EVERY_MS, RING_SAMPLES, startCooldownWatch } from '../src/cooldown-watch';
import { createLogger } from '../src/log';
import { SampleStore } from '../src/samples';
import type { SensorInfo } from '../src/wire';
import { agentArgs, cleanupTempDirs, copyFixtures, readSpool, rewrite, spawnAgent, tempDir, type AgentProcess } from './helpers';

// The cooldown before each run (the spec's cooldown block), on one node: the verdict on what the
// agent read, the watch that feeds it samples and writes the node's record, and the real agent
// writing that record from its sensors.

afterAll(cleanupTempDirs);

const T0 = 1_764_460_800_000;
const silent = createLogger('silent');
const thresholds = { powerMargin: 0.1, tempMarginC: 5, settleS: 1, maxWaitS: 10 };
const reference = (powerW: number | null, gpus: IdleReference['gpus'] = []): IdleReference => ({ node: 'n1', powerW, gpus, runId: 'r0', measuredAt: '2026-12-08T00:00:00.000Z' });
const reading = (powerW: number | null, previousPowerW: number | null = null, gpus: CooldownReading['gpus'] = []): CooldownReading => ({ powerSensors: true, powerW, previousPowerW, gpus });

describe('the verdict', () => {
  test("with the node's idle reference: cool once its power is within powerMargin of it, and says what it compared", () => {
    expect(cooldownVerdict(thresholds, reference(100), reading(109.9))).toEqual({
      cool: true, criterion: 'idle_baseline', powerW: 109.9, referenceW: 100, maxGpuTempC: null, referenceTempC: null, gpus: [],
    });
    expect(cooldownVerdict(thresholds, reference(100), reading(110.1)).cool).toBe(false);
    // Below idle is cool too: the margin bounds the power from above only.
    expect(cooldownVerdict(thresholds, reference(100), reading(60)).cool).toBe(true);
    expect(cooldownVerdict({ ...thresholds, powerMargin: 0 }, reference(100), reading(100.5)).cool).toBe(false);
  });

  test('the temperature gate: every GPU with an idle temperature must be within tempMarginC of it; a GPU without one is not held', () => {
    const ref = reference(100, [{ gpu: 0, tempC: 30 }, { gpu: 1, tempC: 32 }]);
    const hot = cooldownVerdict(thresholds, ref, reading(90, null, [{ gpu: 0, tempC: 34 }, { gpu: 1, tempC: 37.5 }, { gpu: 2, tempC: 80 }]));
    expect(hot).toMatchObject({ cool: false, maxGpuTempC: 80, referenceTempC: 32 });
    expect(hot.gpus).toEqual([
      { gpu: 0, tempC: 34, referenceTempC: 30 },
      { gpu: 1, tempC: 37.5, referenceTempC: 32 },
      { gpu: 2, tempC: 80, referenceTempC: null },
    ]);
    expect(cooldownVerdict(thresholds, ref, reading(90, null, [{ gpu: 0, tempC: 35 }, { gpu: 1, tempC: 37 }, { gpu: 2, tempC: 80 }])).cool).toBe(true);
    // Power within the margin does not make up for a hot GPU, nor a cool GPU for high power.
    expect(cooldownVerdict(thresholds, ref, reading(200, null, [{ gpu: 0, tempC: 30 }])).cool).toBe(false);
  });

  test('without a reference: settled once two consecutive means agree within powerMargin of the earlier one', () => {
    expect(cooldownVerdict(thresholds, null, reading(105, 100))).toEqual({
      cool: true, criterion: 'settled', powerW: 105, referenceW: null, maxGpuTempC: null, referenceTempC: null, gpus: [],
    });
    expect(cooldownVerdict(thresholds, null, reading(89, 100)).cool).toBe(false); // still cooling
    expect(cooldownVerdict(thresholds, null, reading(111, 100)).cool).toBe(false); // warming
    expect(cooldownVerdict(thresholds, null, reading(100, null)).cool).toBe(false); // one mean is no trend
    // A hot GPU does not hold a node without a reference: there is nothing to compare it with.
    expect(cooldownVerdict(thresholds, null, reading(100, 100, [{ gpu: 0, tempC: 90 }])).cool).toBe(true);
  });

  test('a node without any power sensor is not held back by power; one whose power is unknown over the window is', () => {
    const none = { ...reading(null, null), powerSensors: false };
    expect(cooldownVerdict(thresholds, null, none).cool).toBe(true);
    expect(cooldownVerdict(thresholds, reference(100), none).cool).toBe(true);
    expect(cooldownVerdict(thresholds, null, reading(null, null)).cool).toBe(false);
    expect(cooldownVerdict(thresholds, reference(100), reading(null)).cool).toBe(false);
    // A reference without idle power (none was read then) gates the temperatures only.
    expect(cooldownVerdict(thresholds, reference(null, [{ gpu: 0, tempC: 30 }]), reading(500, null, [{ gpu: 0, tempC: 31 }])).cool).toBe(true);
  });
});

/** A store with the given sensors, and a clock that samples them all every `intervalMs` from T0. */
function bench(sensors: { sensor: string; source?: SensorInfo['source']; unit?: SensorInfo['unit'] }[], plan: Partial<CooldownPlan> = {}, intervalMs = 100) {
  const store = new SampleStore();
  const ids = sensors.map((s) => store.register({ sensor: s.sensor, source: s.source ?? 'hwmon', unit: s.unit ?? 'W' }));
  const file = path.join(tempDir(), 'n1.cooled.json');
  const full: CooldownPlan = { ergCooldown: 1, ...thresholds, references: [], ...plan };
  const watch = new CooldownWatch(full, 'n1', store, file, silent);
  let t = T0;
  /** Samples every sensor at each step until the record is written or `untilS` passes; `value(sensor, seconds since T0)`. */
  const run = (value: (sensor: string, s: number) => number, untilS = 60) => {
    for (; t <= T0 + untilS * 1000 && !watch.done; t += intervalMs) {
      sensors.forEach((s, i) => store.push(ids[i]!, t, value(s.sensor, (t - T0) / 1000)));
      watch.observe(t);
      // Batches close and empty the store's columns; the watch keeps what it needs.
      store.takeBatch('n1', 0, false);
    }
  };
  const record = (): NodeCooldown => NodeCooldown.strict().parse(JSON.parse(fs.readFileSync(file, 'utf8')));
  return { store, watch, file, run, record };
}

describe('the watch, on synthetic samples', () => {
  test('a node cooling from 300 W towards its 100 W idle: cool once the mean of the last settleS is within 10 %, not before', () => {
    // Exponential cooling, 200 W above idle decaying with τ = 3 s: instantaneous power passes 110 W at 3 ln 20 ≈ 8.99 s.
    const b = bench([{ sensor: 'gpu0.power' }], { references: [reference(100)], maxWaitS: 60 });
    b.run((_, s) => 100 + 200 * Math.exp(-s / 3));
    const r = b.record();
    expect(r).toMatchObject({ node: 'n1', reached: true, criterion: 'idle_baseline', referenceW: 100 });
    expect(r.powerW!).toBeLessThanOrEqual(110);
    // The trailing mean of a falling power is above its last value: the wait ends after the
    // instantaneous crossing, and within one settleS and one check of it.
    const crossing = 3 * Math.log(20);
    expect(r.waitedS).toBeGreaterThan(crossing);
    expect(r.waitedS).toBeLessThanOrEqual(crossing + thresholds.settleS + (EVALUATE_EVERY_MS + 100) / 1000);
  });

  test("follows the energy selection rules: a module node's power is its modules', not modules + the parts inside them", () => {
    const b = bench([{ sensor: 'module0.power' }, { sensor: 'grace0.power' }, { sensor: 'cpu0.power' }], { references: [reference(400)] });
    b.run((sensor) => ({ 'module0.power': 350, 'grace0.power': 120, 'cpu0.power': 80 })[sensor]!);
    expect(b.record()).toMatchObject({ reached: true, criterion: 'idle_baseline', powerW: expect.closeTo(350, 9), referenceW: 400 });
  });

  test('reads an energy counter as power (RAPL package): settled after two settleS of 50 W', () => {
    const b = bench([{ sensor: 'cpu0.energy', source: 'rapl', unit: 'J' }]);
    b.run((_, s) => 1e6 + 50 * s);
    const r = b.record();
    expect(r).toMatchObject({ reached: true, criterion: 'settled', powerW: expect.closeTo(50, 6), referenceW: null });
    // Two windows of settleS are needed before two means can agree; the first check after them decides.
    expect(r.waitedS).toBeGreaterThanOrEqual(2 * thresholds.settleS);
    expect(r.waitedS).toBeLessThanOrEqual(2 * thresholds.settleS + (EVALUATE_EVERY_MS + 100) / 1000);
  });

  test('a GPU that stays hot holds the node until maxWaitS, and the record says reached: false with the temperatures', () => {
    const b = bench([{ sensor: 'gpu0.power' }, { sensor: 'gpu0.temp', source: 'nvml', unit: '°C' }], {
      references: [reference(100, [{ gpu: 0, tempC: 30 }])], maxWaitS: 4,
    });
    b.run((sensor) => (sensor === 'gpu0.power' ? 100 : 40));
    expect(b.record()).toEqual({
      node: 'n1', waitedS: 4, reached: false, criterion: 'idle_baseline', powerW: expect.closeTo(100, 9), referenceW: 100,
      maxGpuTempC: 40, referenceTempC: 30, gpus: [{ gpu: 0, tempC: 40, referenceTempC: 30 }],
    });
  });

  test('power that never settles: reached false at maxWaitS, by the settled criterion', () => {
    const b = bench([{ sensor: 'cpu0.power', source: 'model' }], { maxWaitS: 5 });
    b.run((_, s) => 100 * 1.2 ** s); // warming by 20 % a second: consecutive 1 s means never agree within 10 %
    expect(b.record()).toMatchObject({ waitedS: 5, reached: false, criterion: 'settled' });
  });

  test('at the deadline without a new sample (a long sampling interval), the record is written all the same, power unknown', () => {
    const b = bench([{ sensor: 'gpu0.power' }], { references: [reference(100)], maxWaitS: 3 }, 60_000);
    b.run(() => 50, 0); // one sample at T0: below the reference, but one sample is no mean over settleS
    expect(b.watch.done).toBe(false);
    b.watch.observe(T0 + 3000);
    expect(b.record()).toMatchObject({ waitedS: 3, reached: false, powerW: null });
  });

  test('keeps a bounded number of samples per sensor whatever the interval: one per 2 × settleS / RING_SAMPLES, none older than 2 × settleS', () => {
    const kept = (b: ReturnType<typeof bench>) => [...(b.watch as unknown as { rings: Map<number, { t: number[] }> }).rings.values()][0]!.t;
    // 10 ms samples, settleS 60: one kept every 120 ms (the first step ≥ 120 000 / 1024 ms).
    const slow = bench([{ sensor: 'gpu0.power' }], { settleS: 60, maxWaitS: 30 }, 10);
    slow.run((_, s) => 100 + s, 25);
    expect(kept(slow)).toHaveLength(Math.floor(25_000 / 120) + 1);
    expect(slow.watch.reading(T0 + 25_000, 25_000).powerW).toBeCloseTo(100 + 24.96 / 2, 9); // linear: the trapezoid is exact
    // settleS 1 over 20 s: only the last 2 s (and one sample before them, for the edge) stay.
    const fast = bench([{ sensor: 'gpu0.power' }], { settleS: 1, maxWaitS: 30 }, 10);
    fast.run((_, s) => 100 * 1.2 ** s, 20);
    const t = kept(fast);
    expect(t.length).toBeLessThanOrEqual(RING_SAMPLES + 2);
    expect(t[1]!).toBeGreaterThan(t.at(-1)! - 2000);
    expect(t[0]!).toBeLessThanOrEqual(t.at(-1)! - 2000);
  });
});

describe('startCooldownWatch', () => {
  test('no --cooldown, or a record already there (a restarted agent, past the wait): nothing to watch', () => {
    const dir = tempDir();
    const file = path.join(dir, 'n1.cooled.json');
    expect(startCooldownWatch(undefined, 'n1', new SampleStore(), file, silent)).toBeNull();
    const plan = path.join(dir, 'erg.cooldown');
    fs.writeFileSync(plan, cooldownPlanText({ ergCooldown: 1, ...thresholds, references: [] }));
    expect(startCooldownWatch(plan, 'n1', new SampleStore(), file, silent)).toBeInstanceOf(CooldownWatch);
    fs.writeFileSync(file, '{}\n');
    expect(startCooldownWatch(plan, 'n1', new SampleStore(), file, silent)).toBeNull();
    expect(fs.readFileSync(file, 'utf8')).toBe('{}\n');
  });

  test('a plan that cannot be read: the node is recorded at once as not cooled, so job.sh does not wait for nothing', () => {
    const dir = tempDir();
    const file = path.join(dir, 'n1.cooled.json');
    const plan = path.join(dir, 'erg.cooldown');
    fs.writeFileSync(plan, JSON.stringify({ ergCooldown: 1, ...thresholds, settleS: 0 }));
    expect(startCooldownWatch(plan, 'n1', new SampleStore(), file, silent)).toBeNull();
    expect(NodeCooldown.strict().parse(JSON.parse(fs.readFileSync(file, 'utf8')))).toMatchObject({ node: 'n1', waitedS: 0, reached: false });
    fs.rmSync(file);
    expect(startCooldownWatch(path.join(dir, 'missing'), 'n1', new SampleStore(), file, silent)).toBeNull();
    expect(fs.existsSync(file)).toBe(true);
  });
});

describe('the agent with --cooldown (the bundle, GH200 hwmon fixture: module0 at 351.234 W)', () => {
  const running: AgentProcess[] = [];
  afterAll(() => running.forEach((a) => a.child.kill('SIGKILL')));

  test('writes <node>.cooled.json only once its module power falls within the margin of the reference', async () => {
    const spool = tempDir();
    const sysfs = copyFixtures('gh200');
    const modulePower = path.join(sysfs, 'sys/class/hwmon/hwmon1/device/power1_average');
    rewrite(modulePower, 500_000_000); // 500 W: hot
    const plan = path.join(tempDir(), 'erg.cooldown');
    fs.writeFileSync(plan, cooldownPlanText({ ergCooldown: 1, ...thresholds, maxWaitS: 60, references: [reference(340)].map((r) => ({ ...r, node: 'node1' })) }));
    const agent = await spawnAgent(agentArgs(spool, sysfs, ['--interval-ms', '100', '--sources', 'hwmon', '--cooldown', plan]));
    running.push(agent);
    const record = path.join(spool, 'node1.cooled.json');
    // Two seconds of 500 W samples: more than a settleS window above 374 W, so no record yet.
    await waitFor(() => readSpool(spool).flatMap((b) => b.samples.filter((c) => c.sensor === 'module0.power').flatMap((c) => c.v)).length >= 20, { what: '2 s of samples', timeoutMs: 20_000 });
    expect(fs.existsSync(record)).toBe(false);
    rewrite(modulePower, 351_234_000);
    await waitFor(() => fs.existsSync(record), { what: 'the cooldown record', timeoutMs: 20_000 });
    const r = NodeCooldown.strict().parse(JSON.parse(fs.readFileSync(record, 'utf8')));
    // The module alone, not module + Grace + CPU + SysIO (577 W): the energy selection rules.
    expect(r).toMatchObject({ node: 'node1', reached: true, criterion: 'idle_baseline', referenceW: 340 });
    expect(r.powerW!).toBeLessThanOrEqual(340 * 1.1);
    expect(r.waitedS).toBeGreaterThanOrEqual(2);
    agent.child.kill('SIGTERM');
    expect((await agent.exited).code).toBe(0);
  }, 60_000);
});
