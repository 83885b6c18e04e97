import { computeRunEnergy, EnergyInputError, perUnit, type NodeTelemetry, type Series, type SensorInfo } from '../src';
import { IdleEnergy, IdleNodeFigures, NodeEnergy, RunEnergy } from '@erg/spec';
import { powerSeries, sampleTimes, T0, win } from './traces';

// Samples every 100 ms from 40 s before T0 to 130 s after: an idle stretch [-30 s, -1 s], the run [0, 120 s].
// Power steps from idle to busy at T0, so the idle window ends a second before it.
const TIMES = sampleTimes(T0 - 40_000, T0 + 130_000, 100);
const RUN = win(0, 120);
const IDLE = win(-30, -1);

/** A constant-power sensor, or one at `idle` W before T0 and `busy` W after. */
const power = (sensor: string, busy: number, idle = busy): Series => powerSeries(sensor, TIMES, (s) => (s < 0 ? idle : busy));
/** An energy counter (J) of constant power, starting at `start` J. */
const counter = (sensor: string, watts: number, start = 1e6, wrapAt?: number): Series => ({
  sensor,
  t: TIMES,
  v: TIMES.map((x) => {
    const e = start + (watts * (x - T0)) / 1000;
    return wrapAt === undefined ? e : ((e % wrapAt) + wrapAt) % wrapAt;
  }),
});
const info = (sensor: string, source: string, wrapAt?: number): SensorInfo => (wrapAt === undefined ? { sensor, source } : { sensor, source, wrapAt });
const describeAll = (series: Series[], source: (s: string) => string): SensorInfo[] => series.map((s) => info(s.sensor, source(s.sensor)));

/** A GH200 node with 4 superchips: module 500 W = GPU 350 + Grace 120 + the rest; Grace 120 = CPU 60 + SysIO 20 + DRAM 40. */
function gh200(node: string, overrides: Partial<Record<string, number>> = {}): NodeTelemetry {
  const series: Series[] = [];
  for (const i of [0, 1, 2, 3]) {
    const w = (kind: string, dflt: number) => overrides[`${kind}${i}`] ?? overrides[kind] ?? dflt;
    series.push(
      power(`module${i}.power`, w('module', 500), 150),
      power(`gpu${i}.power`, w('gpu', 350), 90),
      power(`grace${i}.power`, w('grace', 120), 50),
      power(`cpu${i}.power`, w('cpu', 60), 25),
      power(`sysio${i}.power`, w('sysio', 20), 10),
      powerSeries(`gpu${i}.util`, TIMES, () => 97),
    );
  }
  return { node, series, sensors: describeAll(series, (s) => (s.startsWith('gpu') ? 'nvml' : 'hwmon')) };
}

/** An x86 node with 4 GPUs (NVML energy counters) and a RAPL package counter. */
function x86(node: string): NodeTelemetry {
  const series: Series[] = [0, 1, 2, 3].map((i) => counter(`gpu${i}.energy`, 300 + 10 * i, 5e7));
  const wrapAt = 262_143.32885;
  series.push(counter('cpu0.energy', 150, 262_000, wrapAt), power('gpu0.power', 999)); // the power reading must lose to the counter
  const sensors = series.map((s) =>
    s.sensor === 'cpu0.energy' ? info(s.sensor, 'rapl', wrapAt) : info(s.sensor, 'nvml'),
  );
  return { node, series, sensors };
}

describe('computeRunEnergy', () => {
  describe('on a GH200 node', () => {
    const r = computeRunEnergy({ window: RUN, nodes: [gh200('gh-1')] });

    it('counts the modules only', () => {
      expect(r.energyJ).toBeCloseTo(4 * 500 * 120, 6);
      expect(r.nodes[0]!.sensorsUsed).toEqual(['module0.power', 'module1.power', 'module2.power', 'module3.power']);
      expect(r.method).toBe('integrated');
      expect(r.coverage).toBeCloseTo(1, 12);
    });

    it('has components that add up to energyJ, and the parts inside the modules in breakdown', () => {
      expect(Object.keys(r.components)).toEqual(['module']);
      expect(Object.values(r.components).reduce((a, b) => a + b, 0)).toBeCloseTo(r.energyJ, 6);
      expect(r.breakdown.gpu).toBeCloseTo(4 * 350 * 120, 6);
      expect(r.breakdown.grace).toBeCloseTo(4 * 120 * 120, 6);
      expect(r.breakdown.cpu).toBeCloseTo(4 * 60 * 120, 6);
      expect(r.breakdown.sysio).toBeCloseTo(4 * 20 * 120, 6);
      expect(r.breakdown.dram_estimate).toBeCloseTo(4 * 40 * 120, 6);
      expect(r.nodes[0]!.breakdown).toEqual(r.breakdown);
    });

    it('derives T, EDP, ED²P and average power from E and the window', () => {
      expect(r.timeS).toBe(120);
      expect(r.edpJs).toBeCloseTo(r.energyJ * 120, 3);
      expect(r.ed2pJs2).toBeCloseTo(r.energyJ * 120 * 120, 1);
      expect(r.avgPowerW).toBeCloseTo(2000, 9);
      expect(r.warnings).toEqual([]);
      expect(r.gaps).toEqual([]);
    });

    it('prefers the module energy counter over its power reading', () => {
      const node = gh200('gh-1');
      node.series.push(counter('module0.energy', 510));
      node.sensors.push(info('module0.energy', 'nvml'));
      const c = computeRunEnergy({ window: RUN, nodes: [node] });
      expect(c.nodes[0]!.sensorsUsed[0]).toBe('module0.energy');
      expect(c.energyJ).toBeCloseTo((510 + 3 * 500) * 120, 6);
    });

    it('warns when GPU + Grace exceed the module by more than 1 %', () => {
      const bad = computeRunEnergy({ window: RUN, nodes: [gh200('gh-1', { gpu1: 400 })] }); // 400 + 120 > 505
      expect(bad.warnings).toEqual([expect.stringMatching(/^gh-1: gpu1 \+ grace1 power exceeded module1 \+ 1 % at 1201 of 1201 timestamps/)]);
      expect(bad.energyJ).toBeCloseTo(r.energyJ, 6); // a warning, not a correction
    });

    it('accepts GPU + Grace within 1 % above the module', () => {
      expect(computeRunEnergy({ window: RUN, nodes: [gh200('gh-1', { gpu: 384 })] }).warnings).toEqual([]); // 504 ≤ 505
    });

    it('flags a negative DRAM estimate (Grace − CPU − SysIO)', () => {
      const bad = computeRunEnergy({ window: RUN, nodes: [gh200('gh-1', { cpu2: 110 })] });
      expect(bad.warnings).toEqual([expect.stringMatching(/^gh-1: DRAM estimate grace2 − cpu2 − sysio2 was negative at 1201 of 1201 timestamps/)]);
    });

    it('gives a GPU outside every module coverage 0 and a warning', () => {
      const node = gh200('gh-1');
      node.series.push(power('gpu4.power', 300));
      const c = computeRunEnergy({ window: RUN, nodes: [node] });
      expect(c.coverage).toBe(0);
      expect(c.warnings).toContainEqual(expect.stringMatching(/gpu4 has no module4 sensor/));
    });

    it('gives a module without counter or power coverage 0 and a warning', () => {
      const node = gh200('gh-1');
      node.series = node.series.filter((s) => s.sensor !== 'module3.power');
      node.sensors.push(info('module3.power', 'hwmon')); // described, but no samples sent
      const c = computeRunEnergy({ window: RUN, nodes: [node] });
      expect(c.coverage).toBe(0);
      expect(c.energyJ).toBeCloseTo(3 * 500 * 120, 6);
      expect(c.warnings).toContainEqual(expect.stringMatching(/module3 has neither an energy counter nor a power reading/));
    });
  });

  describe('on an x86 node', () => {
    const r = computeRunEnergy({ window: RUN, nodes: [x86('x-1')] });

    it('adds GPU energy counters and the RAPL package counter, across its wrap: method counter', () => {
      expect(r.method).toBe('counter');
      expect(r.nodes[0]!.sensorsUsed).toEqual(['gpu0.energy', 'gpu1.energy', 'gpu2.energy', 'gpu3.energy', 'cpu0.energy']);
      expect(r.components.gpu).toBeCloseTo((300 + 310 + 320 + 330) * 120, 4);
      expect(r.components.cpu).toBeCloseTo(150 * 120, 4);
      expect(r.energyJ).toBeCloseTo((1260 + 150) * 120, 4);
      expect(r.breakdown).toEqual({});
      expect(r.warnings).toEqual([]);
    });

    it('adds DRAM (RAPL dram domain) as memory', () => {
      const node = x86('x-1');
      node.series.push(counter('memory0.energy', 25));
      node.sensors.push(info('memory0.energy', 'rapl'));
      const c = computeRunEnergy({ window: RUN, nodes: [node] });
      expect(c.components.memory).toBeCloseTo(25 * 120, 4);
      expect(c.energyJ).toBeCloseTo((1260 + 150 + 25) * 120, 4);
    });

    it('integrates power where there is no counter: method integrated', () => {
      const series = [power('gpu0.power', 250), power('cpu0.power', 100)];
      const c = computeRunEnergy({ window: RUN, nodes: [{ node: 'x-2', series, sensors: describeAll(series, () => 'nvml') }] });
      expect(c.method).toBe('integrated');
      expect(c.energyJ).toBeCloseTo(350 * 120, 6);
    });

    it('falls back to power when the counter has no samples in the window', () => {
      const series = [{ sensor: 'gpu0.energy', t: [T0 - 5000, T0 - 4000], v: [1, 2] }, power('gpu0.power', 250), power('cpu0.power', 100)];
      const c = computeRunEnergy({ window: RUN, nodes: [{ node: 'x-2', series, sensors: [] }] });
      expect(c.nodes[0]!.sensorsUsed).toEqual(['gpu0.power', 'cpu0.power']);
      expect(c.energyJ).toBeCloseTo(350 * 120, 6);
    });

    it('reports a model-sourced sensor as method model', () => {
      const node = x86('x-1');
      node.series.push(power('memory0.power', 20));
      node.sensors.push(info('memory0.power', 'model'));
      expect(computeRunEnergy({ window: RUN, nodes: [node] }).method).toBe('model');
    });

    it('never counts a GPU without energy counter or power as 0 J: warning and coverage 0', () => {
      const node = x86('x-1');
      node.series.push(powerSeries('gpu4.util', TIMES, () => 90));
      node.sensors.push(info('gpu5.energy', 'nvml')); // described, nothing sent
      const c = computeRunEnergy({ window: RUN, nodes: [node] });
      expect(c.coverage).toBe(0);
      expect(c.nodes[0]!.coverage).toBe(0);
      expect(c.warnings).toEqual([
        'x-1: gpu4 has neither an energy counter nor a power reading; its energy is unknown (not 0), coverage 0',
        'x-1: gpu5 has neither an energy counter nor a power reading; its energy is unknown (not 0), coverage 0',
      ]);
      expect(c.energyJ).toBeCloseTo(r.energyJ, 6);
    });

    it('warns when no CPU energy is available, without zeroing coverage', () => {
      const series = [counter('gpu0.energy', 300), powerSeries('cpu0.util', TIMES, () => 50)];
      const c = computeRunEnergy({ window: RUN, nodes: [{ node: 'x-3', series, sensors: [] }] });
      expect(c.warnings).toEqual([expect.stringMatching(/^x-3: no CPU energy counter or power reading/)]);
      expect(c.coverage).toBeCloseTo(1, 12);
    });

    it('uses Grace for the CPU where there is no module and no CPU sensor, and then leaves memory out', () => {
      const series = [power('gpu0.power', 300), power('grace0.power', 120), power('memory0.power', 30)];
      const c = computeRunEnergy({ window: RUN, nodes: [{ node: 'g-1', series, sensors: [] }] });
      expect(c.components).toEqual({ gpu: expect.closeTo(300 * 120, 6), grace: expect.closeTo(120 * 120, 6) });
      expect(c.breakdown.memory).toBeCloseTo(30 * 120, 6);
      expect(c.warnings).toEqual([expect.stringMatching(/memory0.power not added/)]);
    });

    it('warns about a counter reset when no wrapAt is known', () => {
      const series: Series[] = [{ sensor: 'gpu0.energy', t: [T0, T0 + 60_000, T0 + 60_100, T0 + 120_000], v: [1000, 1000 + 60 * 300, 30, 30 + 300 * 59.9] }];
      const c = computeRunEnergy({ window: RUN, nodes: [{ node: 'x-4', series, sensors: [info('gpu0.energy', 'nvml')] }] });
      expect(c.warnings).toContainEqual(expect.stringMatching(/^x-4: gpu0.energy reset 1 time/));
    });
  });

  it('sums over nodes and counts a node listed twice once', () => {
    const one = computeRunEnergy({ window: RUN, nodes: [gh200('gh-1')] });
    const two = computeRunEnergy({ window: RUN, nodes: [gh200('gh-1'), x86('x-1'), gh200('gh-1')] });
    const x = computeRunEnergy({ window: RUN, nodes: [x86('x-1')] });
    expect(two.energyJ).toBeCloseTo(one.energyJ + x.energyJ, 4);
    expect(two.nodes.map((n) => n.node)).toEqual(['gh-1', 'x-1']);
    expect(two.method).toBe('integrated'); // the weakest over the nodes
    expect(two.components.module).toBeCloseTo(one.energyJ, 6);
    expect(two.components.gpu).toBeCloseTo(x.components.gpu!, 6);
    expect(two.warnings).toEqual(['gh-1: listed more than once; counted once (the first entry)']);
  });

  it('reports gaps per node and sensor, with coverage below 1', () => {
    const node = gh200('gh-1');
    const m = node.series.find((s) => s.sensor === 'module2.power')!;
    const keep = Array.from(m.t, (x) => x < T0 + 50_000 || x > T0 + 52_000);
    m.t = Float64Array.from(m.t).filter((_, i) => keep[i]);
    m.v = Float64Array.from(m.v).filter((_, i) => keep[i]);
    const r = computeRunEnergy({ window: RUN, nodes: [node] });
    expect(r.gaps).toHaveLength(1);
    expect(r.gaps[0]).toMatchObject({ node: 'gh-1', sensor: 'module2.power' });
    expect(r.gaps[0]!.fromMs).toBeCloseTo(T0 + 49_900, 3);
    expect(r.gaps[0]!.toMs).toBeCloseTo(T0 + 52_100, 3);
    expect(r.coverage).toBeCloseTo(1 - 2.2 / 120, 9);
    expect(r.energyJ).toBeCloseTo(4 * 500 * 120, 6); // the gap is reported, and still bridged linearly
  });

  it('subtracts an idle baseline measured by the same rules', () => {
    const r = computeRunEnergy({ window: RUN, nodes: [gh200('gh-1')], idleBaseline: IDLE });
    expect(r.idle!.powerW).toBeCloseTo(4 * 150, 6);
    expect(r.idle!.energyJ).toBeCloseTo(4 * 150 * 120, 4);
    expect(r.idle!.netEnergyJ).toBeCloseTo(4 * (500 - 150) * 120, 4);
    expect(r.idle!.coverage).toBeCloseTo(1, 12);
    expect(r.idle!.method).toBe('integrated');
  });

  it("keeps each node's idle power and GPU temperatures: what a later run's cooldown compares the node with", () => {
    // gpu0 at 35 °C idle (40 °C for its last 9 s: 91 of its 291 samples), gpu1 at 30 °C; a second node without temperature sensors.
    const temps = [powerSeries('gpu0.temp', TIMES, (s) => (s < -10 ? 35 : 40)), powerSeries('gpu1.temp', TIMES, () => 30)];
    const hot = gh200('gh-1');
    const r = computeRunEnergy({ window: RUN, nodes: [{ ...hot, series: [...hot.series, ...temps] }, gh200('gh-2', { module: 400 })], idleBaseline: IDLE });
    expect(r.idle!.nodes).toEqual([
      {
        node: 'gh-1', powerW: expect.closeTo(4 * 150, 6), coverage: expect.closeTo(1, 12), method: 'integrated',
        gpus: [{ gpu: 0, meanTempC: expect.closeTo((200 * 35 + 91 * 40) / 291, 9), maxTempC: 40 }, { gpu: 1, meanTempC: 30, maxTempC: 30 }],
      },
      { node: 'gh-2', powerW: expect.closeTo(4 * 150, 6), coverage: expect.closeTo(1, 12), method: 'integrated', gpus: [] },
    ]);
    // The nodes' figures add up to the run's idle power, and temperatures never count as power.
    expect(r.idle!.powerW).toBeCloseTo(r.idle!.nodes!.reduce((sum, n) => sum + n.powerW!, 0), 9);
  });

  it("a node with no power reading in the baseline has no idle power (null), not 0 W", () => {
    const series = [powerSeries('gpu0.temp', TIMES, () => 33)];
    const r = computeRunEnergy({ window: RUN, nodes: [{ node: 'cold', series, sensors: [] }], idleBaseline: IDLE });
    expect(r.idle!.nodes).toEqual([{ node: 'cold', powerW: null, coverage: 0, method: 'integrated', gpus: [{ gpu: 0, meanTempC: 33, maxTempC: 33 }] }]);
    expect(r.idle!.powerW).toBe(0);
  });

  it('takes the idle power over the stretch with samples, not the whole baseline window', () => {
    const series = [power('gpu0.power', 300, 100), power('cpu0.power', 50, 20)];
    const r = computeRunEnergy({ window: RUN, nodes: [{ node: 'x', series, sensors: [] }], idleBaseline: win(-60, -1) }); // samples start at -40 s
    expect(r.idle!.powerW).toBeCloseTo(120, 6);
    expect(r.idle!.coverage).toBeCloseTo(39 / 59, 9);
  });

  it('has coverage 0, method integrated and a warning with no nodes', () => {
    const r = computeRunEnergy({ window: RUN, nodes: [] });
    expect(r).toMatchObject({ energyJ: 0, coverage: 0, method: 'integrated', warnings: ['no nodes: nothing was measured'] });
  });

  it('refuses an empty or reversed window', () => {
    expect(() => computeRunEnergy({ window: win(5, 5), nodes: [] })).toThrow(EnergyInputError);
    expect(() => computeRunEnergy({ window: RUN, nodes: [], idleBaseline: win(0, -1) })).toThrow(EnergyInputError);
  });
});

describe('perUnit', () => {
  it('divides energy by a positive count and is null otherwise', () => {
    expect(perUnit(1000, 4)).toBe(250);
    expect(perUnit(1000, 0)).toBeNull();
    expect(perUnit(1000, null)).toBeNull();
    expect(perUnit(1000, NaN)).toBeNull();
    expect(perUnit(NaN, 3)).toBeNull();
  });

  it('is null, never Infinity, when the count is so small that the quotient overflows', () => {
    expect(perUnit(1000, 1e-320)).toBeNull();
    expect(perUnit(Number.MAX_VALUE, 0.5)).toBeNull();
  });
});

describe("computeRunEnergy's result is the API's RunEnergy", () => {
  // The API serves these figures through @erg/spec's schema, which drops keys it does not know:
  // a field added here but not there would silently never reach a user.
  it('has exactly the fields of the schema, on every kind of node, with an idle baseline and gaps', () => {
    const x = x86('x86-1');
    const kept = TIMES.filter((t) => t < T0 + 50_000 || t > T0 + 60_000); // 10 s without samples
    const gappy: NodeTelemetry = { node: 'gappy', series: [powerSeries('gpu0.power', kept, () => 300)], sensors: [] };
    const r = computeRunEnergy({ window: RUN, nodes: [gh200('gh-1'), x, gappy], idleBaseline: IDLE });
    expect(r.idle).toBeDefined();
    expect(r.gaps.length).toBeGreaterThan(0);
    expect(r.warnings.length).toBeGreaterThan(0);
    expect(RunEnergy.strict().parse(r)).toEqual(r);
    for (const n of r.nodes) expect(NodeEnergy.strict().parse(n)).toEqual(n);
    expect(IdleEnergy.strict().parse(r.idle)).toEqual(r.idle);
    for (const n of r.idle!.nodes!) expect(IdleNodeFigures.strict().parse(n)).toEqual(n);
  });
});

describe('sensor scopes', () => {
  // A GH200's NVML counter covers the whole module; an agent or importer that sends it under a GPU's
  // name but says its scope must not have the module's energy counted as the GPU's.
  it('counts a sensor under the scope its source declared, with a warning, and the GPU from GPU-scope power', () => {
    const series = [counter('gpu0.energy', 450), power('gpu0.power', 300), power('grace0.power', 100)];
    const sensors = [info('gpu0.energy', 'nvml'), info('gpu0.power', 'nvml'), info('grace0.power', 'hwmon')];
    sensors[0] = { ...sensors[0]!, scope: 'module' };
    const r = computeRunEnergy({ window: RUN, nodes: [{ node: 'gh', series, sensors }] });
    expect(r.nodes[0]!.sensorsUsed).toEqual(['module0.energy']);
    expect(r.energyJ).toBeCloseTo(450 * 120, 6);
    expect(r.components).toEqual({ module: expect.closeTo(450 * 120, 6) });
    expect(r.breakdown.gpu).toBeCloseTo(300 * 120, 6);
    expect(r.warnings).toEqual(expect.arrayContaining(['gh: gpu0.energy covers the module (its source says so); counted as module0.energy']));
  });

  it('leaves a sensor whose scope is its own component as it is', () => {
    const series = [counter('gpu0.energy', 300)];
    const r = computeRunEnergy({ window: RUN, nodes: [{ node: 'h100', series, sensors: [{ ...info('gpu0.energy', 'nvml'), scope: 'gpu' }] }] });
    expect(r.nodes[0]!.sensorsUsed).toEqual(['gpu0.energy']);
    expect(r.components.gpu).toBeCloseTo(300 * 120, 6);
    expect(r.warnings.filter((w) => w.includes('covers the'))).toEqual([]);
  });
});

describe('a counter that covers only part of the window', () => {
  // The counter was read for the first 48 s of the 120 s window only; power covers all of it.
  const partial = (s: Series): Series => {
    const keep = Array.from(s.t).map((t, i) => [t, i] as const).filter(([t]) => t <= T0 + 48_000).map(([, i]) => i);
    return { sensor: s.sensor, t: keep.map((i) => s.t[i]!), v: keep.map((i) => s.v[i]!) };
  };

  it('is not silently preferred: the better-covered power is used, and method and a warning say so', () => {
    const series = [partial(counter('gpu0.energy', 300)), power('gpu0.power', 300), counter('cpu0.energy', 50)];
    const r = computeRunEnergy({ window: RUN, nodes: [{ node: 'x', series, sensors: describeAll(series, () => 'nvml') }] });
    expect(r.nodes[0]!.sensorsUsed).toEqual(['gpu0.power', 'cpu0.energy']);
    expect(r.method).toBe('integrated');
    expect(r.coverage).toBeCloseTo(1, 9);
    expect(r.components.gpu).toBeCloseTo(300 * 120, 6);
    expect(r.warnings).toContain('x: gpu0.energy covers 40.0 % of the window and gpu0.power 100.0 %; the better-covered gpu0.power is used');
  });

  it('a counter covering the window as well as power stays preferred', () => {
    const series = [counter('gpu0.energy', 300), power('gpu0.power', 999)];
    const r = computeRunEnergy({ window: RUN, nodes: [{ node: 'x', series, sensors: describeAll(series, () => 'nvml') }] });
    expect(r.nodes[0]!.sensorsUsed).toContain('gpu0.energy');
    expect(r.warnings.filter((w) => w.includes('better-covered'))).toEqual([]);
  });
});

describe('figures that cannot be trusted say so', () => {
  it('a run shorter than 10 sampling intervals is flagged too_short', () => {
    // 200 ms sampling, a 0.5 s run: two or three samples.
    const times = sampleTimes(T0 - 1000, T0 + 1500, 200);
    const short = computeRunEnergy({ window: win(0, 0.5), nodes: [{ node: 'q', series: [powerSeries('cpu0.power', times, () => 200)], sensors: [] }] });
    expect(short.flags).toEqual(['too_short']);
    expect(short.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^the run lasted 0\.500 s, fewer than 10 sampling intervals \(200 ms\)/)]));
    const long = computeRunEnergy({ window: RUN, nodes: [{ node: 'q', series: [power('cpu0.power', 200)], sensors: [] }] });
    expect(long.flags).toEqual([]);
  });

  it('a negative net energy is flagged, with the baseline and run power in its warning', () => {
    // Idle baseline 245 W (something else ran), the run 211 W on average.
    const series = [power('cpu0.power', 211, 245)];
    const r = computeRunEnergy({ window: RUN, nodes: [{ node: 'q', series, sensors: [] }], idleBaseline: IDLE });
    expect(r.idle!.netEnergyJ).toBeLessThan(0);
    expect(r.flags).toEqual(['negative_net_energy']);
    expect(r.warnings).toEqual(expect.arrayContaining([expect.stringContaining('its net energy is negative (-4.08e+3 J): the idle baseline drew 245 W, more than the run\'s 211 W')]));
  });
});

describe('power-state sensors are never energy', () => {
  // power_limit is in watts like power: counting it, or letting a module's limit make a node look
  // like a module node, would change the run's energy. The state belongs to assessPowerState.
  const stateSeries = (i: number): Series[] => [
    power(`module${i}.power_limit`, 900),
    power(`gpu${i}.power_limit`, 700),
    power(`gpu${i}.clock_app`, 1980),
    power(`gpu${i}.temp`, 71),
    power(`gpu${i}.clock_events`, 0x24),
  ];
  const withState = (node: NodeTelemetry): NodeTelemetry => {
    const extra = [0, 1, 2, 3].flatMap(stateSeries);
    // Declared with a scope too, which for energy sensors would rename them.
    const sensors = [...node.sensors, ...extra.map((s) => ({ ...info(s.sensor, 'nvml'), scope: 'module' }))];
    return { node: node.node, series: [...node.series, ...extra], sensors };
  };
  const same = (a: ReturnType<typeof computeRunEnergy>, b: ReturnType<typeof computeRunEnergy>) => {
    expect(a.energyJ).toBe(b.energyJ);
    expect(a.method).toBe(b.method);
    expect(a.coverage).toBe(b.coverage);
    expect(a.components).toEqual(b.components);
    expect(a.breakdown).toEqual(b.breakdown);
    expect(a.nodes).toEqual(b.nodes);
    expect(a.warnings).toEqual(b.warnings);
    expect(a.flags).toEqual(b.flags);
    expect(a.gaps).toEqual(b.gaps);
  };

  it('a GH200 node with module and GPU power limits has the same energy as without them', () => {
    const plain = computeRunEnergy({ window: RUN, nodes: [gh200('gh-1')], idleBaseline: IDLE });
    const limited = computeRunEnergy({ window: RUN, nodes: [withState(gh200('gh-1'))], idleBaseline: IDLE });
    same(limited, plain);
    expect(limited.nodes[0]!.sensorsUsed).toEqual(['module0.power', 'module1.power', 'module2.power', 'module3.power']);
    expect(limited.energyJ).toBeCloseTo(4 * 500 * 120, 6);
  });

  it('a module power limit alone does not make a node without module power a module node', () => {
    const series = [power('gpu0.power', 300), power('grace0.power', 120)];
    const plain = computeRunEnergy({ window: RUN, nodes: [{ node: 'g', series, sensors: [] }] });
    const limited = computeRunEnergy({ window: RUN, nodes: [{ node: 'g', series: [...series, ...stateSeries(0)], sensors: [] }] });
    same(limited, plain);
    expect(limited.nodes[0]!.sensorsUsed).toEqual(['gpu0.power', 'grace0.power']);
  });

  it('an x86 node with GPU power limits and clock events keeps its counters and warnings', () => {
    const node = x86('x-1');
    node.series.push(powerSeries('gpu4.power_limit', TIMES, () => 700), powerSeries('gpu4.temp', TIMES, () => 60));
    same(computeRunEnergy({ window: RUN, nodes: [node] }), computeRunEnergy({ window: RUN, nodes: [x86('x-1')] }));
  });
});
