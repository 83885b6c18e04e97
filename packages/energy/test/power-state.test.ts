import { assessPowerState, EnergyInputError, type NodeTelemetry, type PowerStateInput, type Series } from '../src';
import { CLOCK_EVENT_REASONS, GpuPowerObserved, RunPowerState, type NodePowerSettings, type PowerRecord, type PowerState } from '@erg/spec';
import { T0, win } from './traces';

// The workload window is [0, 100 s] after T0.
const RUN = win(0, 100);
const { sw_power_cap: CAP, sw_thermal_slowdown: SW_THERMAL, hw_thermal_slowdown: HW_THERMAL, gpu_idle: IDLE } = CLOCK_EVENT_REASONS;

/** A series from [seconds after T0, value] pairs. */
const at = (sensor: string, points: [number, number][]): Series => ({ sensor, t: points.map(([s]) => T0 + s * 1000), v: points.map(([, v]) => v) });
/** A reading every 10 s from -20 s to 110 s, constant. */
const steady = (sensor: string, v: number): Series => at(sensor, Array.from({ length: 14 }, (_, i) => [-20 + 10 * i, v] as [number, number]));
const node = (name: string, ...series: Series[]): NodeTelemetry => ({ node: name, series, sensors: [] });
const record = (name: string, applied: Partial<NodePowerSettings> | null, requested: PowerState = {}): PowerRecord => ({
  ergPower: 1,
  ok: true,
  node: name,
  job: '4242',
  requested,
  previous: null,
  applied: applied && { gpus: [], ...applied },
  error: null,
});
const records = (...rs: PowerRecord[]) => new Map(rs.map((r) => [r.node, r]));
const assess = (over: Partial<PowerStateInput>) => assessPowerState({ window: RUN, requested: null, nodes: [], records: new Map(), maxThrottledShare: 0.1, ...over });

describe('assessPowerState: the power limit', () => {
  const asked: PowerState = { gpuPowerLimitW: 300 };

  it('is clean for a run at the requested 300 W, and reports what was in force', () => {
    const r = assess({ requested: asked, nodes: [node('gh-001', steady('gpu0.power_limit', 300), steady('gpu0.clock', 1755), steady('gpu0.temp', 64))], records: records(record('gh-001', null)) });
    expect(r.flags).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.power).toEqual({
      requested: { gpuPowerLimitW: 300 },
      gpus: [{ node: 'gh-001', gpu: 0, powerLimitW: 300, moduleLimitW: null, smClockMaxMHz: 1755, appClockMHz: null, maxTempC: 64, throttledShare: null, throttleReasons: [] }],
      cpuMaxFreqKHz: {},
    });
    expect(RunPowerState.strict().parse(r.power)).toEqual(r.power);
    for (const g of r.power!.gpus) expect(GpuPowerObserved.strict().parse(g)).toEqual(g);
  });

  it('accepts the enforced limit within max(1 W, 0.5 %) of the request', () => {
    const within = assess({ requested: { gpuPowerLimitW: 500 }, nodes: [node('gh-001', steady('gpu0.power_limit', 502.5))], records: records(record('gh-001', null)) });
    expect(within.flags).toEqual([]);
    const beyond = assess({ requested: { gpuPowerLimitW: 500 }, nodes: [node('gh-001', steady('gpu0.power_limit', 502.6))], records: records(record('gh-001', null)) });
    expect(beyond.flags).toEqual(['power_state_mismatch']);
    const small = assess({ requested: { gpuPowerLimitW: 100 }, nodes: [node('gh-001', steady('gpu0.power_limit', 101))], records: records(record('gh-001', null)) });
    expect(small.flags).toEqual([]); // 0.5 % of 100 W is 0.5 W; the 1 W floor allows it
  });

  it('flags 450 W enforced against 500 W requested, naming node, GPU and both values', () => {
    const r = assess({
      requested: { gpuPowerLimitW: 500 },
      nodes: [node('gh-001', steady('gpu0.power_limit', 500), steady('gpu1.power_limit', 450))],
      records: records(record('gh-001', { gpus: [{ index: 0, powerLimitW: 500 }, { index: 1, powerLimitW: 500 }] })),
    });
    expect(r.flags).toEqual(['power_state_mismatch']);
    // The sensor is what was in force; the read-back (500 W) is taken only where there is none.
    expect(r.warnings).toEqual(['gh-001 gpu1: the enforced power limit was 450 W, not the 500 W requested (gpu1.power_limit over the window)']);
  });

  it('takes the median inside the window, and the last sample before it when none is inside', () => {
    // A limit lowered for 10 s of the window does not move the median; one sampled once before the window still holds.
    const series = [at('gpu0.power_limit', [[-5, 300], [10, 300], [40, 250], [60, 300], [80, 300]]), at('gpu1.power_limit', [[-30, 300], [130, 200]])];
    const r = assess({ requested: asked, nodes: [node('gh-001', ...series)], records: records(record('gh-001', null)) });
    expect(r.power!.gpus.map((g) => g.powerLimitW)).toEqual([300, 300]);
    expect(r.flags).toEqual([]);
  });

  it('is clean without a sensor when the node helper read back the requested limit', () => {
    const r = assess({ requested: asked, nodes: [node('x-1', steady('gpu0.power', 280))], records: records(record('x-1', { gpus: [{ index: 0, powerLimitW: 300 }, { index: 1, powerLimitW: 300 }] })) });
    expect(r.flags).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.power).toEqual({ requested: asked, gpus: [], cpuMaxFreqKHz: {} });
  });

  it('flags a read-back that differs, when there is no sensor', () => {
    const r = assess({ requested: asked, nodes: [node('x-1')], records: records(record('x-1', { gpus: [{ index: 0, powerLimitW: 350 }] })) });
    expect(r.warnings).toEqual(['x-1 gpu0: the node helper read back a power limit of 350 W, not the 300 W requested']);
  });

  it('is unverified with neither sensor nor read-back, naming the knob and the node', () => {
    const r = assess({ requested: asked, nodes: [node('x-1', steady('gpu0.power', 280))], records: records(record('x-1', { gpus: [{ index: 0, powerLimitW: null }] })) });
    expect(r.flags).toEqual(['power_state_unverified']);
    expect(r.warnings).toEqual([
      "x-1: nothing recorded the power limit in force on gpu0 (no gpuN.power_limit sensor, no read-back in the node helper's record): the requested 300 W could not be checked",
    ]);
    const noGpus = assess({ requested: asked, nodes: [node('x-1')], records: records(record('x-1', null)) });
    expect(noGpus.warnings).toEqual([expect.stringMatching(/^x-1: nothing recorded the power limit in force on any of its GPUs/)]);
  });

  it('checks the module limit on moduleN.power_limit, N the GPU index', () => {
    const nodes = [node('gh-001', steady('module0.power_limit', 900), steady('module1.power_limit', 1000))];
    const r = assess({ requested: { moduleLimitW: 900 }, nodes, records: records(record('gh-001', null)) });
    expect(r.power!.gpus.map((g) => [g.gpu, g.moduleLimitW, g.powerLimitW])).toEqual([[0, 900, null], [1, 1000, null]]);
    expect(r.warnings).toEqual(['gh-001 gpu1: the enforced module power limit was 1000 W, not the 900 W requested (module1.power_limit over the window)']);
  });
});

describe('assessPowerState: locked clocks and CPU frequency', () => {
  const asked: PowerState = { gpuLockedClocksMHz: [1200, 1500] };

  it('accepts an SM clock up to one step above the locked maximum, and flags one beyond', () => {
    const ok = assess({ requested: asked, nodes: [node('h-1', at('gpu0.clock', [[0, 1200], [50, 1515], [90, 345]]))], records: records(record('h-1', null)) });
    expect(ok.flags).toEqual([]);
    const r = assess({ requested: asked, nodes: [node('h-1', at('gpu0.clock', [[-5, 1980], [0, 1200], [50, 1980], [90, 1500]]))], records: records(record('h-1', null)) });
    expect(r.flags).toEqual(['power_state_mismatch']);
    expect(r.warnings).toEqual(['h-1 gpu0: the SM clock reached 1980 MHz, above the locked clocks 1200–1500 MHz requested']);
    expect(r.power!.gpus[0]!.smClockMaxMHz).toBe(1980);
  });

  it('flags a read-back that differs from the request, and one that is not locked at all', () => {
    const r = assess({
      requested: asked,
      nodes: [node('h-1')],
      records: records(record('h-1', { gpus: [{ index: 0, lockedClocksMHz: [1200, 1500] }, { index: 1, lockedClocksMHz: [1200, 1410] }, { index: 2, lockedClocksMHz: null }] })),
    });
    expect(r.warnings).toEqual([
      'h-1 gpu1: the node helper read back locked clocks 1200–1410 MHz, not the 1200–1500 MHz requested',
      'h-1 gpu2: the node helper read back no locked clocks, not the 1200–1500 MHz requested',
    ]);
  });

  it('is unverified for a GPU with neither SM clock samples in the window nor a read-back', () => {
    const r = assess({ requested: asked, nodes: [node('h-1', at('gpu0.clock', [[-5, 1400]]))], records: records(record('h-1', { gpus: [{ index: 0 }] })) });
    expect(r.flags).toEqual(['power_state_unverified']);
    expect(r.warnings).toEqual([expect.stringMatching(/^h-1: nothing recorded the locked clocks in force on gpu0 \(no gpuN.clock sensor/)]);
  });

  it("checks the CPUs' maximum frequency on the record, within 1 %, and reports it per node", () => {
    const cpu: PowerState = { cpuFreqKHz: 2_000_000 };
    const nodes = [node('a'), node('b'), node('c')];
    const r = assess({ requested: cpu, nodes, records: records(record('a', { cpuMaxFreqKHz: 1_990_000 }), record('b', { cpuMaxFreqKHz: 3_100_000 }), record('c', { cpuMaxFreqKHz: null })) });
    expect(r.power!.cpuMaxFreqKHz).toEqual({ a: 1_990_000, b: 3_100_000, c: null });
    expect(r.flags).toEqual(['power_state_mismatch', 'power_state_unverified']);
    expect(r.warnings).toEqual([
      'b: the node helper read back a CPU maximum frequency of 3100000 kHz, not the 2000000 kHz requested',
      "c: nothing recorded the CPUs' maximum frequency in force (no read-back in the node helper's record): the requested 2000000 kHz could not be checked",
    ]);
  });
});

describe('assessPowerState: the node helper’s records', () => {
  const asked: PowerState = { gpuPowerLimitW: 300 };

  it('flags a node of the run without a record', () => {
    const nodes = [node('gh-001', steady('gpu0.power_limit', 300)), node('gh-002', steady('gpu0.power_limit', 300))];
    const r = assess({ requested: asked, nodes, records: records(record('gh-001', null)) });
    expect(r.flags).toEqual(['power_state_mismatch']);
    expect(r.warnings).toEqual(['no power record from node gh-002: the helper did not report what it set']);
  });

  it('flags a record that says the helper failed, and does not call that node unverified as well', () => {
    const failed: PowerRecord = { ...record('x-1', null), ok: false, error: 'nvidia-smi -pl 300: Insufficient Permissions' };
    const r = assess({ requested: asked, nodes: [node('x-1')], records: records(failed) });
    expect(r.flags).toEqual(['power_state_mismatch']);
    expect(r.warnings).toEqual(['x-1: the node helper could not apply the power state (nvidia-smi -pl 300: Insufficient Permissions): what was requested was not in force']);
  });

  it('never flags the power state when nothing was requested', () => {
    const r = assess({ requested: null, nodes: [node('x-1', steady('gpu0.power_limit', 700))], records: new Map() });
    expect(r.flags).toEqual([]);
    expect(r.power).toEqual({ requested: null, gpus: [expect.objectContaining({ powerLimitW: 700 })], cpuMaxFreqKHz: {} });
  });
});

describe('assessPowerState: throttling', () => {
  // Held values: 0x20 from before the window until 10 s, 0 until 13 s, 0x40 until 40 s, idle until 70 s,
  // the power cap until 99 s, 0 to the end; the sample at 105 s is after the window.
  const events = at('gpu0.clock_events', [[-5, SW_THERMAL], [10, 0], [13, HW_THERMAL], [40, IDLE], [70, CAP], [99, 0], [105, SW_THERMAL]]);

  it('takes the share of the window time-weighted, holding each sample (and the one before the window) until the next', () => {
    const r = assess({ nodes: [node('gh-001', events)] });
    // (10 + 27 + 29) s of 100 s; the cap counts, since no power limit was requested.
    expect(r.power!.gpus[0]!.throttledShare).toBe(0.66);
    expect(r.power!.gpus[0]!.throttleReasons).toEqual(['sw_power_cap', 'sw_thermal_slowdown', 'hw_thermal_slowdown']);
    expect(r.flags).toEqual(['throttled']);
    expect(r.warnings).toEqual([
      'gh-001 gpu0 was throttled for 66 % of the window (sw_power_cap, sw_thermal_slowdown, hw_thermal_slowdown): its time and energy reflect a slowed GPU',
    ]);
  });

  it('does not count the power cap when the campaign set a power limit (the cap is the experiment), but still the thermal bits', () => {
    for (const requested of [{ gpuPowerLimitW: 300 }, { moduleLimitW: 900 }] as PowerState[]) {
      const r = assess({ requested, nodes: [node('gh-001', events, steady('gpu0.power_limit', 300), steady('module0.power_limit', 900))], records: records(record('gh-001', null)) });
      expect(r.power!.gpus[0]!.throttledShare).toBe(0.37);
      expect(r.power!.gpus[0]!.throttleReasons).toEqual(['sw_thermal_slowdown', 'hw_thermal_slowdown']);
      expect(r.flags).toEqual(['throttled']);
    }
    // Locked clocks do not make the cap expected.
    const clocks = assess({ requested: { gpuLockedClocksMHz: [1000, 1980] }, nodes: [node('gh-001', events)], records: records(record('gh-001', null)) });
    expect(clocks.power!.gpus[0]!.throttledShare).toBe(0.66);
  });

  it('counts a sample with the cap and a thermal bit as throttled even when the cap is expected', () => {
    const r = assess({ requested: { gpuPowerLimitW: 300 }, nodes: [node('gh-001', at('gpu0.clock_events', [[0, CAP | SW_THERMAL], [20, CAP]]), steady('gpu0.power_limit', 300))], records: records(record('gh-001', null)) });
    expect(r.power!.gpus[0]!).toMatchObject({ throttledShare: 0.2, throttleReasons: ['sw_thermal_slowdown'] });
  });

  it('says so, without a flag, when the expected power cap alone held a GPU down', () => {
    const capped = at('gpu0.clock_events', [[0, CAP], [80, 0]]);
    const r = assess({ requested: { gpuPowerLimitW: 300 }, nodes: [node('gh-001', capped, steady('gpu0.power_limit', 300))], records: records(record('gh-001', null)) });
    expect(r.flags).toEqual([]);
    expect(r.power!.gpus[0]!).toMatchObject({ throttledShare: 0, throttleReasons: [] });
    expect(r.warnings).toEqual(['gh-001 gpu0 ran at its power cap for 80 % of the window (sw_power_cap): expected, since the campaign set the power limit, so not counted as throttling']);
    // Without a limit requested the same cap is throttling.
    const unasked = assess({ nodes: [node('gh-001', capped)] });
    expect(unasked.flags).toEqual(['throttled']);
    expect(unasked.warnings).toEqual(['gh-001 gpu0 was throttled for 80 % of the window (sw_power_cap): its time and energy reflect a slowed GPU']);
  });

  it('names node, GPU, share and reasons in its warning', () => {
    const r = assess({ nodes: [node('gh-001', at('gpu0.clock_events', [[0, 0], [50, SW_THERMAL], [84, 0]])), node('gh-002', at('gpu3.clock_events', [[0, 0]]))] });
    expect(r.warnings).toEqual(['gh-001 gpu0 was throttled for 34 % of the window (sw_thermal_slowdown): its time and energy reflect a slowed GPU']);
    expect(r.power!.gpus.map((g) => [g.node, g.gpu, g.throttledShare])).toEqual([['gh-001', 0, 0.34], ['gh-002', 3, 0]]);
  });

  it('flags a share above maxThrottledShare, not one equal to it', () => {
    const equal = assess({ nodes: [node('n', at('gpu0.clock_events', [[0, SW_THERMAL], [10, 0]]))], maxThrottledShare: 0.1 });
    expect(equal.power!.gpus[0]!.throttledShare).toBe(0.1);
    expect(equal.flags).toEqual([]);
    expect(equal.warnings).toEqual([]);
    const above = assess({ nodes: [node('n', at('gpu0.clock_events', [[0, SW_THERMAL], [10.001, 0]]))], maxThrottledShare: 0.1 });
    expect(above.flags).toEqual(['throttled']);
  });

  it('counts time before the first sample as not throttled, and has no share without a sample before the window ends', () => {
    const late = assess({ nodes: [node('n', at('gpu0.clock_events', [[60, HW_THERMAL]]))] });
    expect(late.power!.gpus[0]!.throttledShare).toBe(0.4);
    const after = assess({ nodes: [node('n', at('gpu0.clock_events', [[120, HW_THERMAL]]))] });
    expect(after.power!.gpus[0]!.throttledShare).toBeNull();
    expect(after.flags).toEqual([]);
  });
});

describe('assessPowerState: nothing to say', () => {
  it('leaves power undefined with nothing requested and no state sensor (the SM clock alone is not one)', () => {
    const r = assess({ nodes: [node('x-1', steady('gpu0.power', 300), steady('gpu0.clock', 1980), steady('gpu0.util', 97))] });
    expect(r).toEqual({ power: undefined, flags: [], warnings: [] });
    expect(assess({})).toEqual({ power: undefined, flags: [], warnings: [] });
  });

  it('reads a node listed twice once', () => {
    const n = node('gh-001', steady('gpu0.temp', 70));
    expect(assess({ nodes: [n, n] }).power!.gpus).toHaveLength(1);
  });

  it('refuses an empty window and a share outside 0–1', () => {
    expect(() => assess({ window: win(5, 5) })).toThrow(EnergyInputError);
    expect(() => assess({ maxThrottledShare: 1.5 })).toThrow(EnergyInputError);
  });
});
