import { Validity, type ValidityCheck, type ValidityCheckName } from '@erg/spec';
import { computeRunEnergy, idleCv, keptShare, longestGapMs, runValidity, type ClockOffset, type NodeTelemetry, type Series, type SensorInfo } from '../src';
import { T0, sampleTimes, win } from './traces';

// A run of 60 s at T0 with an idle baseline [-10 s, -1 s], its agents asked to sample every 200 ms;
// samples from 20 s before the run to 20 s after it, so every edge has a sample beyond it.
const INTERVAL = 200;
const RUN = win(0, 60);
const IDLE = win(-10, -1);
const TIMES = sampleTimes(T0 - 20_000, T0 + 80_000, INTERVAL);
const DEFAULTS = Validity.parse({});

/** A power series of `p(seconds since T0)` at `times` (default: every 200 ms). */
function power(sensor: string, p: (s: number) => number, times: readonly number[] = TIMES): Series {
  return { sensor, t: Float64Array.from(times), v: Float64Array.from(times, (x) => p((x - T0) / 1000)) };
}

/** An energy counter (J) of `watts` constant power, ×`scale`, starting at 5 kJ, optionally wrapping. */
function counter(sensor: string, watts: number, scale = 1, wrapAt?: number, times: readonly number[] = TIMES): Series {
  const v = times.map((x) => {
    const e = 5_000 + (scale * watts * (x - (T0 - 20_000))) / 1000;
    return wrapAt === undefined ? e : e % wrapAt;
  });
  return { sensor, t: Float64Array.from(times), v: Float64Array.from(v) };
}

function node(name: string, series: Series[], sources: Record<string, string> = {}, extra: Partial<SensorInfo>[] = []): NodeTelemetry {
  const sensors = series.map((s) => ({ sensor: s.sensor, source: sources[s.sensor] ?? 'procfs', ...(extra.find((e) => e.sensor === s.sensor) ?? {}) }));
  return { node: name, series, sensors };
}

/** The times without those in (fromS, toS) seconds after T0. */
function without(fromS: number, toS: number, times: readonly number[] = TIMES): number[] {
  return times.filter((x) => x <= T0 + fromS * 1000 || x >= T0 + toS * 1000);
}

/** The run's validity as runFiguresOf computes it: over the sensors its energy uses. */
function validity(nodes: NodeTelemetry[], options: { clocks?: ClockOffset[]; idle?: boolean; limits?: Partial<Validity> } = {}) {
  const idleWindow = options.idle === false ? null : IDLE;
  const energy = computeRunEnergy({ window: RUN, nodes, ...(idleWindow ? { idleBaseline: idleWindow } : {}) });
  return runValidity({
    window: RUN, idleWindow, nodes, used: energy.nodes, requestedIntervalMs: INTERVAL, clocks: options.clocks ?? [],
    limits: Validity.parse(options.limits ?? {}),
  });
}

function checkOf(v: ReturnType<typeof validity>, name: ValidityCheckName): ValidityCheck {
  return v.checks.find((c) => c.check === name)!;
}

const steady = (sensor = 'cpu0.power') => power(sensor, () => 120);

describe('runValidity: a healthy run', () => {
  it('passes every gate it can measure and names each with its worst value', () => {
    const v = validity([node('n1', [steady(), power('gpu0.power', () => 300), counter('gpu0.energy', 300)], { 'gpu0.power': 'nvidia-smi', 'gpu0.energy': 'nvml' })], {
      clocks: [{ node: 'n1', offsetMs: -12, readings: 30 }],
    });
    expect(v).toMatchObject({ valid: true, reasons: [], excluded: false });
    expect(v.checks.map((c) => c.check)).toEqual(['sample_share', 'longest_gap', 'sampling_interval', 'clock_offset', 'clock_spread', 'counter_agreement', 'idle_stability']);
    expect(checkOf(v, 'sample_share')).toMatchObject({ status: 'pass', value: 1, limit: 0.95 });
    expect(checkOf(v, 'longest_gap')).toMatchObject({ status: 'pass', value: 0.2, limit: 3 });
    expect(checkOf(v, 'sampling_interval')).toMatchObject({ status: 'pass', value: 1, limit: 1.5 });
    expect(checkOf(v, 'clock_offset')).toMatchObject({ status: 'pass', value: 12, where: 'n1 (30 pushes)' });
    expect(checkOf(v, 'clock_spread')).toMatchObject({ status: 'not_measured', value: null, detail: 'one agent sent its clock: nothing to compare it with' });
    expect(checkOf(v, 'counter_agreement').status).toBe('pass');
    expect(checkOf(v, 'counter_agreement').value!).toBeLessThan(1e-9);
    expect(checkOf(v, 'idle_stability')).toMatchObject({ status: 'pass', value: 0, where: 'n1' });
  });

  it('says not_measured where a gate has nothing to judge, and stays valid', () => {
    const v = validity([node('n1', [steady()])], { idle: false });
    expect(v.valid).toBe(true);
    expect(checkOf(v, 'clock_offset')).toMatchObject({ status: 'not_measured', value: null, where: null });
    expect(checkOf(v, 'clock_offset').detail).toMatch(/no agent sent its clock/);
    expect(checkOf(v, 'counter_agreement')).toMatchObject({ status: 'not_measured', detail: 'no component has both an energy counter and a power reading' });
    expect(checkOf(v, 'idle_stability')).toMatchObject({ status: 'not_measured', detail: 'no idle baseline (telemetry.idleBaselineS is 0)' });
  });
});

describe('sample_share: the sample intervals kept', () => {
  // Each sample dropped inside the window turns two intervals into one: one kept of two expected.
  const dropping = (k: number) => {
    const inside = TIMES.filter((x) => x > RUN.startMs && x < RUN.endMs);
    const dropped = new Set(Array.from({ length: k }, (_, i) => inside[10 + i * 16]!));
    return TIMES.filter((x) => !dropped.has(x));
  };

  it('passes with exactly the share required kept (285 of 300 intervals) and fails with one fewer', () => {
    const at = checkOf(validity([node('n1', [power('cpu0.power', () => 120, dropping(15))])]), 'sample_share');
    expect(at).toMatchObject({ status: 'pass', where: 'n1 cpu0.power' });
    expect(at.value).toBeCloseTo(0.95, 12);
    const below = checkOf(validity([node('n1', [power('cpu0.power', () => 120, dropping(16))])]), 'sample_share');
    expect(below.status).toBe('fail');
    expect(below.value).toBeCloseTo(284 / 300, 12);
    expect(below.detail).toBe('94.7 % of the sample intervals expected every 200 ms kept < 95.0 % at n1 cpu0.power');
  });

  it('does not count jitter as lost intervals, whatever the phase of the samples against the window', () => {
    const jittered = sampleTimes(T0 - 20_000 + 37, T0 + 80_000, INTERVAL, 90, 7);
    expect(keptShare(Float64Array.from(jittered), RUN, INTERVAL)).toBeGreaterThan(0.995);
    expect(keptShare(Float64Array.from(sampleTimes(T0 - 20_000 + 137, T0 + 80_000, INTERVAL)), RUN, INTERVAL)).toBeCloseTo(1, 12);
  });

  it('is at most 1 for samples taken faster than asked', () => {
    expect(keptShare(Float64Array.from(sampleTimes(T0 - 20_000, T0 + 80_000, 50)), RUN, INTERVAL)).toBe(1);
  });

  it('counts a 20 s hole as the intervals it should have held: 201 kept of 300', () => {
    expect(keptShare(Float64Array.from(without(10, 30)), RUN, INTERVAL)).toBeCloseTo(201 / 300, 12);
  });

  it('counts a window edge without a sample beyond it as missed intervals', () => {
    const late = TIMES.filter((x) => x >= T0 + 6_000);
    expect(keptShare(Float64Array.from(late), RUN, INTERVAL)).toBeCloseTo(270 / 300, 12);
  });
});

describe('longest_gap: the longest stretch without a sample', () => {
  it('fails a run with a 20 s hole, naming the node and sensor', () => {
    const v = validity([node('n1', [steady('gpu0.power'), power('cpu0.power', () => 120, without(10, 30))])]);
    expect(checkOf(v, 'longest_gap')).toMatchObject({ status: 'fail', value: 20, where: 'n1 cpu0.power', detail: 'longest gap 20 s > 3 s at n1 cpu0.power' });
    expect(v.valid).toBe(false);
    expect(v.reasons).toContain('longest gap 20 s > 3 s at n1 cpu0.power');
  });

  it('passes a gap of exactly maxGapS and fails one a sample longer', () => {
    expect(checkOf(validity([node('n1', [power('cpu0.power', () => 120, without(10, 13))])]), 'longest_gap')).toMatchObject({ status: 'pass', value: 3 });
    expect(checkOf(validity([node('n1', [power('cpu0.power', () => 120, without(10, 13.2))])]), 'longest_gap')).toMatchObject({ status: 'fail', value: 3.2 });
  });

  it("includes the window's edges: an agent that began sampling 4 s into the run", () => {
    const late = TIMES.filter((x) => x >= T0 + 4_000);
    expect(longestGapMs(Float64Array.from(late), RUN)).toBe(4_000);
    const early = TIMES.filter((x) => x <= T0 + 55_000);
    expect(longestGapMs(Float64Array.from(early), RUN)).toBe(5_000);
    expect(longestGapMs(new Float64Array(0), RUN)).toBe(60_000);
  });

  it('reads the gap across the edge whole: a sample 10 s before the window and the next 1 s into it', () => {
    const t = Float64Array.from([T0 - 10_000, ...TIMES.filter((x) => x >= T0 + 1_000)]);
    expect(longestGapMs(t, RUN)).toBe(11_000);
  });
});

describe('sampling_interval: the achieved median interval over the requested one', () => {
  it('passes at exactly maxIntervalRatio and fails above it', () => {
    const at = checkOf(validity([node('n1', [power('cpu0.power', () => 120, sampleTimes(T0 - 20_000, T0 + 80_000, 300))])]), 'sampling_interval');
    expect(at).toMatchObject({ status: 'pass', value: 1.5 });
    const above = checkOf(validity([node('n1', [power('cpu0.power', () => 120, sampleTimes(T0 - 20_000, T0 + 80_000, 320))])]), 'sampling_interval');
    expect(above).toMatchObject({ status: 'fail', value: 1.6, detail: 'median sampling interval 320 ms, 1.60 × the requested 200 ms > 1.50 × at n1 cpu0.power' });
  });
});

describe('clock_offset and clock_spread: the agents against the server and each other', () => {
  it('fails agents 3 s apart, each 1.5 s off the server', () => {
    const v = validity([node('n1', [steady()]), node('n2', [steady()])], {
      clocks: [{ node: 'n1', offsetMs: 1_500, readings: 12 }, { node: 'n2', offsetMs: -1_500, readings: 11 }],
    });
    expect(checkOf(v, 'clock_spread')).toMatchObject({ status: 'fail', value: 3_000, where: 'n1 vs n2', detail: "agents' clocks 3,000 ms apart > 1,000 ms at n1 vs n2" });
    expect(checkOf(v, 'clock_offset')).toMatchObject({ status: 'fail', value: 1_500, where: 'n1 (12 pushes)' });
    expect(v.reasons).toEqual(["agent clock +1,500 ms from erg's server > 1,000 ms at n1 (12 pushes)", "agents' clocks 3,000 ms apart > 1,000 ms at n1 vs n2"]);
  });

  it('passes an offset and a spread of exactly maxClockOffsetMs, and fails just beyond', () => {
    const at = validity([node('n1', [steady()]), node('n2', [steady()])], { clocks: [{ node: 'n1', offsetMs: 400, readings: 3 }, { node: 'n2', offsetMs: -600, readings: 3 }] });
    expect(checkOf(at, 'clock_spread')).toMatchObject({ status: 'pass', value: 1_000 });
    expect(checkOf(at, 'clock_offset')).toMatchObject({ status: 'pass', value: 600, where: 'n2 (3 pushes)' });
    expect(checkOf(validity([node('n1', [steady()])], { clocks: [{ node: 'n1', offsetMs: -1_000, readings: 1 }] }), 'clock_offset').status).toBe('pass');
    const beyond = checkOf(validity([node('n1', [steady()])], { clocks: [{ node: 'n1', offsetMs: -1_000.5, readings: 1 }] }), 'clock_offset');
    expect(beyond).toMatchObject({ status: 'fail', value: 1_000.5 });
    expect(beyond.detail).toBe("agent clock −1,001 ms from erg's server > 1,000 ms at n1 (1 push)");
  });
});

describe('counter_agreement: an energy counter against its integrated power', () => {
  const pair = (scale: number, sources: Record<string, string> = { 'gpu0.power': 'nvidia-smi', 'gpu0.energy': 'nvml' }) =>
    checkOf(validity([node('n1', [power('gpu0.power', () => 300), counter('gpu0.energy', 300, scale)], sources)]), 'counter_agreement');

  it('fails a counter 10 % off the integrated power, judged relative to the counter', () => {
    const c = pair(1 / 0.9);
    expect(c).toMatchObject({ status: 'fail', where: 'n1 gpu0.energy vs gpu0.power', detail: 'energy counter and integrated power differ by 10.0 % > 5.0 % at n1 gpu0.energy vs gpu0.power' });
    expect(c.value).toBeCloseTo(0.1, 12);
  });

  it('passes just inside maxCounterDisagreement and fails just outside', () => {
    expect(pair(1 / 0.9501)).toMatchObject({ status: 'pass' });
    expect(pair(1 / 0.9499)).toMatchObject({ status: 'fail' });
  });

  it("compares NVML's 1 s averaged power with the counter half a second earlier: a step at the window's start is no disagreement", () => {
    // 0 W until the run, 1 kW in it; the power reading at t is the mean over [t − 1 s, t].
    const averaged = (s: number) => 1_000 * Math.min(1, Math.max(0, s));
    const energy = (s: number) => 1_000 * Math.max(0, s);
    const run = { startMs: T0, endMs: T0 + 10_000 };
    const series = [power('gpu0.power', averaged), { sensor: 'gpu0.energy', t: Float64Array.from(TIMES), v: Float64Array.from(TIMES, (x) => energy((x - T0) / 1000)) }];
    const of = (powerSource: string) => {
      const n = node('n1', series, { 'gpu0.power': powerSource, 'gpu0.energy': 'nvml' });
      const energyOf = computeRunEnergy({ window: run, nodes: [n] });
      return runValidity({ window: run, idleWindow: null, nodes: [n], used: energyOf.nodes, requestedIntervalMs: INTERVAL, clocks: [], limits: { ...DEFAULTS, maxCounterDisagreement: 0.04 } });
    };
    const nvml = of('nvml').checks.find((c) => c.check === 'counter_agreement')!;
    expect(nvml.status).toBe('pass');
    expect(nvml.value!).toBeLessThan(0.005);
    // The same readings from a source that declares no averaging are compared edge to edge: 5 % apart.
    const undeclared = of('nvidia-smi').checks.find((c) => c.check === 'counter_agreement')!;
    expect(undeclared.status).toBe('fail');
    expect(undeclared.value!).toBeCloseTo(0.05, 2);
  });

  it('unwraps a counter whose range is known (it wraps every minute here)', () => {
    const wrapping = [power('gpu0.power', () => 300), counter('gpu0.energy', 300, 1, 20_000)];
    const known = checkOf(validity([node('n1', wrapping, { 'gpu0.power': 'nvidia-smi', 'gpu0.energy': 'rapl' }, [{ sensor: 'gpu0.energy', wrapAt: 20_000 }])]), 'counter_agreement');
    expect(known.status).toBe('pass');
    expect(known.value!).toBeLessThan(1e-9);
  });

  it('fails a counter that stopped counting for 10 s of the window', () => {
    const stalled = counter('gpu0.energy', 300);
    const v = Float64Array.from(stalled.v);
    const from = TIMES.findIndex((x) => x >= T0 + 20_000);
    for (let i = from; i < v.length; i++) v[i] = TIMES[i]! < T0 + 30_000 ? v[from]! : v[i]! - 3_000;
    const c = checkOf(validity([node('n1', [power('gpu0.power', () => 300), { ...stalled, v }], { 'gpu0.power': 'nvidia-smi', 'gpu0.energy': 'nvml' })]), 'counter_agreement');
    expect(c.status).toBe('fail');
    expect(c.value).toBeCloseTo(3_000 / 15_000, 6);
  });

  it('compares a module-scoped counter with the module power, not with the GPU it is named after', () => {
    const n = node('n1', [power('module0.power', () => 500), power('gpu0.power', () => 300), counter('gpu0.energy', 500)], { 'module0.power': 'hwmon', 'gpu0.power': 'nvml', 'gpu0.energy': 'nvml' }, [
      { sensor: 'gpu0.energy', scope: 'module' },
    ]);
    const c = checkOf(validity([n]), 'counter_agreement');
    expect(c).toMatchObject({ status: 'pass', where: 'n1 module0.energy vs module0.power' });
  });
});

describe('idle_stability: how steady each node draws power over its idle baseline', () => {
  const wobbling = (amplitude: number) => node('n1', [power('cpu0.power', (s) => (s < 0 ? 100 + amplitude * Math.sin((2 * Math.PI * s) / 1.8) : 200))]);

  it('passes at exactly its CV and fails a hair below it', () => {
    const n = wobbling(20);
    const cv = idleCv(n, IDLE, INTERVAL)!;
    expect(cv).toBeGreaterThan(0.1);
    expect(cv).toBeLessThan(0.2);
    expect(checkOf(validity([n], { limits: { maxIdleCv: cv } }), 'idle_stability')).toMatchObject({ status: 'pass', value: cv, where: 'n1' });
    expect(checkOf(validity([n], { limits: { maxIdleCv: cv * 0.999 } }), 'idle_stability')).toMatchObject({ status: 'fail', value: cv });
  });

  it('fails an unsteady baseline against the default and passes a steady one', () => {
    expect(checkOf(validity([wobbling(20)]), 'idle_stability').status).toBe('fail');
    expect(checkOf(validity([wobbling(3)]), 'idle_stability').status).toBe('pass');
  });

  it('is not measured on a baseline too short for three stretches of the requested interval', () => {
    expect(idleCv(wobbling(20), { startMs: T0 - 1_000, endMs: T0 - 500 }, INTERVAL)).toBeNull();
  });
});

describe('the run as a whole', () => {
  it('is invalid with one reason per failed gate, and excluded only where the spec says so', () => {
    const nodes = [node('n1', [power('cpu0.power', () => 120, without(10, 30))])];
    expect(validity(nodes)).toMatchObject({ valid: false, excluded: false });
    expect(validity(nodes, { limits: { excludeInvalid: true } })).toMatchObject({ valid: false, excluded: true });
    expect(validity([node('n1', [steady()])], { limits: { excludeInvalid: true } })).toMatchObject({ valid: true, excluded: false });
  });

  it('judges only the sensors the energy uses: a utilisation series with a hole does not fail it', () => {
    const v = validity([node('n1', [steady(), power('cpu0.util', () => 50, without(10, 30))])]);
    expect(checkOf(v, 'longest_gap').value).toBe(0.2);
  });
});
