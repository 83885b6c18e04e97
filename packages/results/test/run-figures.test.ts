import { parseCampaignSpec } from '@erg/spec';
import { figureSeries, figureSpan, EDGE_MARGIN_MS, runFiguresOf, type RunFigureInputs } from '../src/run-figures';

describe('figureSeries: the samples a run\'s figures use', () => {
  const span = { startMs: 1_000, endMs: 2_000 };

  it('keeps the samples inside the span and the nearest one either side, however far out', () => {
    const t = [0, 100, 900, 1_000, 1_500, 2_000, 2_500, 9_000];
    const v = t.map((x) => x / 100);
    const [kept] = figureSeries([{ node: 'n1', sensor: 'gpu0.power', t, v }], span);
    expect(Array.from(kept!.t)).toEqual([900, 1_000, 1_500, 2_000, 2_500]);
    expect(Array.from(kept!.v)).toEqual([9, 10, 15, 20, 25]);
  });

  it('gives the same samples whichever way the series was cut (whole, or the span with its bracketing samples)', () => {
    const t = Array.from({ length: 200 }, (_, i) => i * 20);
    const v = t.map((x) => Math.sin(x));
    const whole = figureSeries([{ node: 'n1', sensor: 'cpu0.power', t, v }], span);
    const bracketed = figureSeries([{ node: 'n1', sensor: 'cpu0.power', t: t.slice(40, 110), v: v.slice(40, 110) }], span);
    expect(bracketed).toEqual(whole);
  });

  it('keeps a series whose samples all lie outside the span by its nearest one, and drops an empty one', () => {
    const out = figureSeries([
      { node: 'n1', sensor: 'module0.power', t: [10, 20], v: [1, 2] },
      { node: 'n1', sensor: 'gpu0.power', t: [], v: [] },
    ], span);
    expect(out).toEqual([{ node: 'n1', sensor: 'module0.power', t: [20], v: [2] }]);
  });

  it('spans both windows with a margin either side', () => {
    expect(figureSpan({ startMs: 10_000, endMs: 20_000 }, { startMs: 5_000, endMs: 10_000 })).toEqual({ startMs: 5_000 - EDGE_MARGIN_MS, endMs: 20_000 + EDGE_MARGIN_MS });
    expect(figureSpan({ startMs: 10_000, endMs: 20_000 }, null)).toEqual({ startMs: 10_000 - EDGE_MARGIN_MS, endMs: 20_000 + EDGE_MARGIN_MS });
  });
});

describe('runFiguresOf: the validity gates', () => {
  const T = 1_764_460_800_000;
  const spec = (validity: Record<string, unknown> = {}) => {
    const parsed = parseCampaignSpec({ name: 'study', cluster: 'local', run: 'srun ./bench', telemetry: { intervalMs: 200 }, validity });
    if (!parsed.ok) throw new Error(parsed.issues.map((i) => i.message).join('; '));
    return parsed.spec;
  };
  const every200 = Array.from({ length: 501 }, (_, i) => T - 20_000 + i * 200);
  /** A 60 s run sampled every 200 ms from 20 s before it to 20 s after; `hole` leaves out the samples in (10 s, 30 s). */
  const inputs = (options: { hole?: boolean; clocks?: RunFigureInputs['clocks']; validity?: Record<string, unknown> } = {}): RunFigureInputs => {
    const t = options.hole ? every200.filter((x) => x <= T + 10_000 || x >= T + 30_000) : every200;
    return {
      window: { startMs: T, endMs: T + 60_000 }, idleWindow: null, execution: 'slurm', spec: spec(options.validity),
      configuration: { key: 'k', parameters: {} }, metrics: {}, nodeList: null, slurmEnergyJ: null,
      series: [{ node: 'n1', sensor: 'cpu0.power', t, v: t.map(() => 120) }],
      sensors: [{ node: 'n1', sensor: 'cpu0.power', source: 'procfs', unit: 'W', scope: null, wrapAt: null, averagingMs: null, updateMs: null }],
      marks: [], neighbours: [], powerRecords: [], cluster: null, carbonIntensity: [], clocks: options.clocks ?? [],
    };
  };

  it('stores a healthy run as valid, with its measured clock offset, and no flag', () => {
    const figures = runFiguresOf(inputs({ clocks: [{ node: 'n1', offsetMs: -4, readings: 30 }] }))!;
    expect(figures.validity).toMatchObject({ valid: true, reasons: [], excluded: false });
    expect(figures.validity!.checks.find((c) => c.check === 'clock_offset')).toMatchObject({ status: 'pass', value: 4, where: 'n1 (30 pushes)' });
    expect(figures.flags).not.toContain('invalid');
  });

  it('flags a run with a 20 s hole invalid, with a warning per failed gate', () => {
    const figures = runFiguresOf(inputs({ hole: true }))!;
    expect(figures.validity).toMatchObject({ valid: false, excluded: false });
    expect(figures.validity!.reasons).toEqual([
      '67.0 % of the sample intervals expected every 200 ms kept < 95.0 % at n1 cpu0.power',
      'longest gap 20 s > 3 s at n1 cpu0.power',
    ]);
    expect(figures.flags).toContain('invalid');
    expect(figures.warnings).toEqual(expect.arrayContaining(['invalid measurement: longest gap 20 s > 3 s at n1 cpu0.power']));
    // The spec's thresholds apply: with gaps up to 30 s allowed and any share kept, the same run is valid.
    expect(runFiguresOf(inputs({ hole: true, validity: { maxGapS: 30, minSampleShare: 0.5 } }))!.validity!.valid).toBe(true);
  });

  it("marks an invalid run excluded where the spec's validity.excludeInvalid says so, and fails agents 3 s apart", () => {
    const clocks = [{ node: 'n1', offsetMs: 1_500, readings: 9 }, { node: 'n2', offsetMs: -1_500, readings: 9 }];
    const figures = runFiguresOf(inputs({ clocks, validity: { excludeInvalid: true } }))!;
    expect(figures.validity).toMatchObject({ valid: false, excluded: true });
    expect(figures.validity!.checks.filter((c) => c.status === 'fail').map((c) => c.check)).toEqual(['clock_offset', 'clock_spread']);
  });
});

describe('runFiguresOf: the nodes Slurm ran the job on, against those that sent telemetry', () => {
  const T = 1_764_460_800_000;
  const parsed = parseCampaignSpec({ name: 'study', cluster: 'local', run: 'srun ./bench', telemetry: { intervalMs: 200 } });
  if (!parsed.ok) throw new Error('spec');
  const t = Array.from({ length: 101 }, (_, i) => T - 5_000 + i * 200);
  const inputs = (nodeList: string | null, nodes: string[]): RunFigureInputs => ({
    window: { startMs: T, endMs: T + 10_000 }, idleWindow: null, execution: 'slurm', spec: parsed.spec,
    configuration: { key: 'k', parameters: {} }, metrics: {}, nodeList, slurmEnergyJ: null,
    series: nodes.map((node) => ({ node, sensor: 'module0.power', t, v: t.map(() => 200) })),
    sensors: nodes.map((node) => ({ node, sensor: 'module0.power', source: 'hwmon', unit: 'W', scope: null, wrapAt: null, averagingMs: null, updateMs: null })),
    marks: [], neighbours: [], powerRecords: [], cluster: null, carbonIntensity: [], clocks: [],
  });

  it('flags missing_node, naming each node of the job without telemetry, and keeps the others\' energy', () => {
    const figures = runFiguresOf(inputs('gh-[001-004]', ['gh-001', 'gh-002', 'gh-004']))!;
    expect(figures.flags).toContain('missing_node');
    expect(figures.nodes.map((n) => n.node)).toEqual(['gh-001', 'gh-002', 'gh-004']);
    expect(figures.energyJ).toBeCloseTo(3 * 200 * 10, 6);
    expect(figures.warnings.filter((w) => w.startsWith('node '))).toEqual([
      "node gh-003: no telemetry from its agent (it failed to start, or died before its first batch; see the run's telemetry/agent.log): the energy is that of 3 of the job's 4 nodes and lacks gh-003's",
    ]);
  });

  it('does not flag a job whose every node reported (agents named by their full host name too), nor one without a node list', () => {
    expect(runFiguresOf(inputs('gh-[001-002]', ['gh-001', 'gh-002.cluster.example']))!.flags).not.toContain('missing_node');
    expect(runFiguresOf(inputs(null, ['gh-001']))!.flags).not.toContain('missing_node');
  });
});

describe("runFiguresOf: a node's clock off the batch host's", () => {
  const T = 1_764_460_800_000;
  const parsed = parseCampaignSpec({ name: 'study', cluster: 'local', run: 'srun ./bench', telemetry: { intervalMs: 200 } });
  if (!parsed.ok) throw new Error('spec');
  // True time: n1 draws 100 W throughout; n2 draws 300 W exactly during the 10 s window and 0 W
  // around it, but n2's clock runs `skewMs` ahead, so its samples are stamped that much later.
  const trueT = Array.from({ length: 201 }, (_, i) => T - 10_000 + i * 200);
  const inputs = (skewMs: number, clocks: RunFigureInputs['clocks']): RunFigureInputs => ({
    window: { startMs: T, endMs: T + 10_000 }, idleWindow: null, execution: 'slurm', spec: parsed.spec,
    configuration: { key: 'k', parameters: {} }, metrics: {}, nodeList: 'n[1-2]', slurmEnergyJ: null,
    series: [
      { node: 'n1', sensor: 'module0.power', t: trueT, v: trueT.map(() => 100) },
      { node: 'n2', sensor: 'module0.power', t: trueT.map((t) => t + skewMs), v: trueT.map((t) => (t >= T && t <= T + 10_000 ? 300 : 0)) },
    ],
    sensors: ['n1', 'n2'].map((node) => ({ node, sensor: 'module0.power', source: 'hwmon', unit: 'W', scope: null, wrapAt: null, averagingMs: null, updateMs: null })),
    marks: [], neighbours: [], powerRecords: [], cluster: null, carbonIntensity: [], clocks,
  });
  const n2 = (f: ReturnType<typeof runFiguresOf>) => f!.nodes.find((n) => n.node === 'n2')!.energyJ;

  it('moves the samples of a node more than maxClockOffsetMs off the batch host, says so, and still fails the clock gates', () => {
    const figures = runFiguresOf(inputs(3_000, [{ node: 'n1', offsetMs: 10, readings: 9 }, { node: 'n2', offsetMs: 3_010, readings: 9 }]))!;
    // Lined up, n2's 300 W fill the window: 3 kJ (uncorrected it would be about 2.1 kJ).
    expect(n2(figures)).toBeCloseTo(3_000, -1);
    expect(figures.warnings).toContain("node n2: its clock is +3.00 s from n1's, which timed the window (each measured against erg's server by its agent's pushes): its samples and marks were moved by −3.00 s to line up");
    expect(figures.validity!.checks.find((c) => c.check === 'clock_spread')).toMatchObject({ status: 'fail' });
    expect(figures.flags).toContain('invalid');
  });

  it('leaves clocks within the bound, and runs whose batch host sent no clock, as they are', () => {
    expect(n2(runFiguresOf(inputs(0, [{ node: 'n1', offsetMs: 0, readings: 9 }, { node: 'n2', offsetMs: 400, readings: 9 }])))).toBeCloseTo(3_000, -1);
    const unmeasured = runFiguresOf(inputs(3_000, [{ node: 'n2', offsetMs: 3_000, readings: 9 }]))!;
    expect(n2(unmeasured)).toBeLessThan(2_500);
    expect(unmeasured.warnings.filter((w) => w.includes('moved by'))).toEqual([]);
  });
});
