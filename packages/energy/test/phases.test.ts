import { campaignPhases, computeRunEnergy, computeRunPhases, EnergyInputError, stepStatistics, type NodeTelemetry, type PhaseMarkInput, type RunPhases, type Series } from '../src';
import { invert, nnls, solve, symmetricEigen } from '../src/least-squares';
import { CampaignPhases, RunPhases as RunPhasesSchema, UNMARKED_PHASE } from '@erg/spec';
import { rng, T0 } from './traces';

/** Power (W) as a function of ms since T0. */
type Power = (ms: number) => number;

/** An energy counter (J) of `power`, exact at every reading, read at the given ms since T0. */
function counter(sensor: string, power: Power, readMs: readonly number[], start = 1000): Series {
  let e = start;
  let at = 0;
  const v = readMs.map((ms) => {
    // Power is piecewise constant on whole milliseconds in these traces: sum it ms by ms.
    for (; at < ms; at++) e += power(at) / 1000;
    return e;
  });
  return { sensor, t: readMs.map((ms) => T0 + ms), v };
}

/** A power meter of `power` whose readings average the time since the previous one (the first: its own millisecond). */
function meter(sensor: string, power: Power, readMs: readonly number[]): Series {
  const v = readMs.map((ms, i) => {
    const [from, to] = i === 0 ? [ms, ms + 1] : [readMs[i - 1]!, ms];
    let sum = 0;
    for (let x = from; x < to; x++) sum += power(x);
    return sum / (to - from);
  });
  return { sensor, t: readMs.map((ms) => T0 + ms), v };
}

const every = (fromMs: number, toMs: number, stepMs: number) => Array.from({ length: Math.floor((toMs - fromMs) / stepMs) + 1 }, (_, i) => fromMs + i * stepMs);
const node = (name: string, series: Series[], source = 'nvml'): NodeTelemetry => ({ node: name, series, sensors: series.map((s) => ({ sensor: s.sensor, source })) });
const win = (fromMs: number, toMs: number) => ({ startMs: T0 + fromMs, endMs: T0 + toMs });
const mark = (kind: PhaseMarkInput['kind'], name: string, ms: number, on = 'n1'): PhaseMarkInput => ({ node: on, kind, name, t: T0 + ms });
/** begin/end marks of `name` over [fromMs, toMs]. */
const phase = (name: string, fromMs: number, toMs: number, on = 'n1'): PhaseMarkInput[] => [mark('begin', name, fromMs, on), mark('end', name, toMs, on)];
const byName = (r: RunPhases, name: string) => r.phases.find((p) => p.name === name)!;
/** The self energies and the unmarked energy: what must add up to the run's energy. */
const partition = (r: RunPhases) => r.phases.reduce((s, p) => s + p.selfEnergyJ, 0) + r.unmarked.energyJ;

describe('computeRunPhases', () => {
  describe('a piecewise-constant trace read by a 1 ms counter', () => {
    // load 0–400 ms at 100 W, train 400–1000 ms at 300 W, then 200 ms unmarked at 50 W.
    const power: Power = (ms) => (ms < 400 ? 100 : ms < 1000 ? 300 : 50);
    const nodes = [node('n1', [counter('gpu0.energy', power, every(0, 1200, 1))])];
    const input = { window: win(0, 1200), nodes, marks: [...phase('load', 0, 400), ...phase('train', 400, 1000)] };
    const r = computeRunPhases(input);

    it('attributes each phase exactly its energy, and the rest to unmarked', () => {
      expect(byName(r, 'load')).toMatchObject({ occurrences: 1, timeS: 0.4, selfTimeS: 0.4, method: 'regression' });
      expect(byName(r, 'load').energyJ).toBeCloseTo(40, 9);
      expect(byName(r, 'load').meanPowerW).toBeCloseTo(100, 9);
      expect(byName(r, 'train').energyJ).toBeCloseTo(180, 9);
      expect(byName(r, 'train').share).toBeCloseTo(180 / 230, 9);
      expect(r.unmarked.timeS).toBeCloseTo(0.2, 12);
      expect(r.unmarked.energyJ).toBeCloseTo(10, 9);
      expect(r.unmarked.meanPowerW).toBeCloseTo(50, 9);
    });

    it('divides exactly the energy computeRunEnergy counts, and says how', () => {
      expect(r.energyJ).toBeCloseTo(computeRunEnergy(input).energyJ, 9);
      expect(partition(r)).toBeCloseTo(r.energyJ, 9);
      expect(r).toMatchObject({ timeS: 1.2, method: 'regression', resolutionMs: 1 });
      expect(r.rescale).toBeCloseTo(1, 12);
      expect(r.fits).toEqual([{ node: 'n1', sensor: 'gpu0.energy', energyJ: r.energyJ, method: 'regression', observations: 1200, labels: 3, rescale: r.fits[0]!.rescale }]);
      // An exact fit leaves no residual: the intervals are (numerically) zero.
      expect(byName(r, 'train').ci95J).toBeLessThan(1e-6);
    });

    it('orders phases by energy and matches the API schema', () => {
      expect(r.phases.map((p) => p.name)).toEqual(['train', 'load']);
      expect(RunPhasesSchema.parse(r)).toEqual(r);
    });

    it('can be told to split proportionally, which is exact here too', () => {
      const p = computeRunPhases({ ...input, attribution: 'proportional' });
      expect(p.method).toBe('proportional');
      expect(byName(p, 'train').energyJ).toBeCloseTo(180, 9);
      expect(byName(p, 'train').ci95J).toBeNull();
      expect(p.warnings.filter((w) => w.includes('proportional'))).toEqual([]);
    });
  });

  describe('nested phases', () => {
    // step 0–1000 ms holds forward 100–400 (400 W) and backward 500–900 (600 W); the rest of step is 200 W.
    const power: Power = (ms) => (ms >= 100 && ms < 400 ? 400 : ms >= 500 && ms < 900 ? 600 : ms < 1000 ? 200 : 100);
    const marks = [mark('begin', 'step', 0), ...phase('forward', 100, 400), ...phase('backward', 500, 900), mark('end', 'step', 1000)];
    const r = computeRunPhases({ window: win(0, 1100), nodes: [node('n1', [counter('gpu0.energy', power, every(0, 1100, 1))])], marks });

    it('counts a phase inclusively with its nested phases, and by itself as self', () => {
      const step = byName(r, 'step');
      expect(step.timeS).toBeCloseTo(1, 12);
      expect(step.selfTimeS).toBeCloseTo(0.3, 12);
      expect(step.energyJ).toBeCloseTo(0.3 * 400 + 0.4 * 600 + 0.3 * 200, 8);
      expect(step.selfEnergyJ).toBeCloseTo(0.3 * 200, 8);
      expect(byName(r, 'forward').energyJ).toBeCloseTo(120, 8);
      expect(byName(r, 'forward').selfEnergyJ).toBeCloseTo(120, 8);
      expect(byName(r, 'backward').energyJ).toBeCloseTo(240, 8);
      expect(r.unmarked.energyJ).toBeCloseTo(10, 8);
    });

    it('has self energies that partition the run (stacked bars), not inclusive ones', () => {
      expect(partition(r)).toBeCloseTo(r.energyJ, 8);
      expect(r.phases.reduce((s, p) => s + p.energyJ, 0)).toBeGreaterThan(r.energyJ);
    });

    it('counts a phase nested in itself once', () => {
      const twice = computeRunPhases({
        window: win(0, 1100),
        nodes: [node('n1', [counter('gpu0.energy', power, every(0, 1100, 1))])],
        marks: [mark('begin', 'step', 0), ...phase('step', 100, 400), mark('end', 'step', 1000)],
      });
      expect(byName(twice, 'step')).toMatchObject({ occurrences: 2 });
      expect(byName(twice, 'step').timeS).toBeCloseTo(1, 12);
      expect(byName(twice, 'step').energyJ).toBeCloseTo(r.energyJ - 10, 8);
    });
  });

  describe('marks that do not pair up', () => {
    const power: Power = () => 100;
    const nodes = [node('n1', [counter('gpu0.energy', power, every(0, 1000, 1))])];
    const window = win(0, 1000);

    it('ignores an end without a begin, with a warning', () => {
      const r = computeRunPhases({ window, nodes, marks: [mark('end', 'ghost', 100), ...phase('a', 200, 400)] });
      expect(r.phases.map((p) => p.name)).toEqual(['a']);
      expect(r.warnings).toContainEqual(expect.stringMatching(/^n1: `end` marks without a matching `begin` ignored: 1 \(ghost/));
    });

    it('closes a phase never ended at the window’s end, with a warning', () => {
      const r = computeRunPhases({ window, nodes, marks: [mark('begin', 'a', 600)] });
      expect(byName(r, 'a')).toMatchObject({ occurrences: 1 });
      expect(byName(r, 'a').timeS).toBeCloseTo(0.4, 12);
      expect(byName(r, 'a').energyJ).toBeCloseTo(40, 8);
      expect(r.warnings).toContainEqual(expect.stringMatching(/^n1: phases never ended, closed at the window’s end: 1 \(a/));
    });

    it('closes phases still open inside one that ends, with a warning', () => {
      const r = computeRunPhases({ window, nodes, marks: [mark('begin', 'outer', 100), mark('begin', 'inner', 200), mark('end', 'outer', 500), mark('end', 'inner', 700)] });
      expect(byName(r, 'inner').timeS).toBeCloseTo(0.3, 12);
      expect(byName(r, 'outer').timeS).toBeCloseTo(0.4, 12);
      expect(r.warnings).toContainEqual(expect.stringMatching(/phases still open when the phase they were begun in ended, closed there: 1 \(inner/));
      // The late `end inner` finds nothing open any more.
      expect(r.warnings).toContainEqual(expect.stringMatching(/`end` marks without a matching `begin` ignored: 1 \(inner/));
    });

    it('clips phases to the window and ignores marks of a node without telemetry', () => {
      const r = computeRunPhases({ window, nodes, marks: [...phase('early', -500, 300), ...phase('late', 900, 2000), ...phase('x', 0, 500, 'elsewhere')] });
      expect(byName(r, 'early').timeS).toBeCloseTo(0.3, 12);
      expect(byName(r, 'late').timeS).toBeCloseTo(0.1, 12);
      expect(r.phases.map((p) => p.name).sort()).toEqual(['early', 'late']);
      expect(r.warnings).toContainEqual('elsewhere: 2 phase mark(s) from a node without telemetry ignored; its energy is not known');
    });

    it('aggregates many bad marks into one warning', () => {
      const marks = Array.from({ length: 1000 }, (_, i) => mark('end', `p${i % 10}`, i));
      const r = computeRunPhases({ window, nodes, marks });
      expect(r.warnings.filter((w) => w.includes('without a matching'))).toEqual([expect.stringContaining(': 1000 (p0, p1, p2, p3, p4, …')]);
    });
  });

  describe('when the readings cannot separate the phases', () => {
    it('falls back to proportional where two phases always share every reading in the same proportions', () => {
      // a 30 ms at 500 W then b 70 ms at 100 W, every 100 ms, read exactly every 100 ms.
      const power: Power = (ms) => (ms % 100 < 30 ? 500 : 100);
      const marks = Array.from({ length: 50 }, (_, i) => [...phase('a', 100 * i, 100 * i + 30), ...phase('b', 100 * i + 30, 100 * i + 100)]).flat();
      const r = computeRunPhases({ window: win(0, 5000), nodes: [node('n1', [counter('gpu0.energy', power, every(0, 5000, 100))])], marks });
      expect(r.method).toBe('proportional');
      expect(r.fits[0]!.method).toBe('proportional');
      expect(r.warnings).toContainEqual(expect.stringMatching(/n1 gpu0\.energy: its readings \(every ~100 ms\) cannot separate a, b: they occur in the same proportions/));
      expect(byName(r, 'a')).toMatchObject({ method: 'proportional', ci95J: null, selfCi95J: null });
      // Proportional: each reading's 22 J split 30:70, never more resolution than the sensor has.
      expect(byName(r, 'a').energyJ).toBeCloseTo(50 * (0.03 * 500 + 0.07 * 100) * 0.3, 6);
      expect(partition(r)).toBeCloseTo(r.energyJ, 8);
    });

    it('falls back to proportional with too few readings for the phases', () => {
      const power: Power = (ms) => (ms < 500 ? 300 : 100);
      const r = computeRunPhases({ window: win(0, 1000), nodes: [node('n1', [counter('gpu0.energy', power, [0, 400, 1000])])], marks: [...phase('a', 0, 500), ...phase('b', 500, 1000)] });
      expect(r.method).toBe('proportional');
      expect(r.warnings).toContainEqual(expect.stringMatching(/n1 gpu0\.energy: a, b fall\(s\) in fewer than 3 of its readings; attributed proportionally/));
      expect(partition(r)).toBeCloseTo(r.energyJ, 8);
    });

    it('attributes a phase in too few readings proportionally and still regresses the others', () => {
      // A 15 ms sliver of unmarked time at the start, then a (300 W) and b (100 W) alternating, 30 ms each.
      const power: Power = (ms) => (ms < 15 ? 50 : Math.floor((ms - 15) / 30) % 2 === 0 ? 300 : 100);
      const marks: PhaseMarkInput[] = [];
      for (let x = 15, i = 0; x < 6015; x += 30, i++) marks.push(...phase(i % 2 === 0 ? 'a' : 'b', x, x + 30));
      const r = computeRunPhases({ window: win(0, 6015), nodes: [node('n1', [counter('gpu0.energy', power, every(0, 6000, 47).concat([6015]))])], marks });
      expect(r.unmarked).toMatchObject({ method: 'proportional', ci95J: null });
      expect(byName(r, 'a').method).toBe('regression');
      // Within 1 %: the sliver's proportional guess (a third of a 300 W reading, not 50 W) is taken off the others.
      expect(Math.abs(byName(r, 'a').meanPowerW! - 300)).toBeLessThan(3);
      expect(Math.abs(byName(r, 'b').meanPowerW! - 100)).toBeLessThan(1);
      expect(r.method).toBe('proportional');
      expect(partition(r)).toBeCloseTo(r.energyJ, 8);
    });
  });

  describe('phases shorter than a reading', () => {
    // Steps of a (620 W), b (780 W), c (420 W), each 20–200 ms, read by a meter every 100 ± 10 ms.
    const r0 = rng(7);
    const levels: Record<string, number> = { a: 620, b: 780, c: 420 };
    const watts: number[] = [];
    const truth: Record<string, number> = { a: 0, b: 0, c: 0 };
    const marks: PhaseMarkInput[] = [];
    for (let step = 0; step < 300; step++) {
      for (const name of ['a', 'b', 'c']) {
        const ms = 20 + Math.round(180 * r0());
        marks.push(...phase(name, watts.length, watts.length + ms));
        for (let i = 0; i < ms; i++) {
          const w = levels[name]! + 20 * (r0() - 0.5);
          watts.push(w);
          truth[name]! += w / 1000;
        }
      }
    }
    const reads = [0];
    while (reads.at(-1)! < watts.length - 110) reads.push(reads.at(-1)! + 90 + Math.round(20 * r0()));
    reads.push(watts.length);
    // 'import': a source with no averaging window of its own (sensor-timing.ts), as the meter here averages since the previous reading.
    const nodes = [node('n1', [meter('gpu0.power', (ms) => watts[ms]!, reads)], 'import')];
    const window = win(0, watts.length);
    const r = computeRunPhases({ window, nodes, marks });
    const p = computeRunPhases({ window, nodes, marks, attribution: 'proportional' });
    const errorOf = (x: RunPhases, name: string) => Math.abs(byName(x, name).energyJ - truth[name]!) / truth[name]!;

    it('resolves them by regression within 1 %, where a proportional split is off by several', () => {
      for (const name of ['a', 'b', 'c']) expect(errorOf(r, name)).toBeLessThan(0.01);
      expect(Math.max(...['a', 'b', 'c'].map((n) => errorOf(p, n)))).toBeGreaterThan(0.05);
      expect(byName(r, 'b').meanPowerW).toBeCloseTo(780, -1);
    });

    it('gives intervals that cover the truth and adds up to the run’s energy', () => {
      // The intervals are the split's uncertainty, not the run energy's: compare with the truth
      // scaled to the energy the run measured (the trapezoid of an averaging meter is off at the edges).
      const scale = r.energyJ / (truth.a! + truth.b! + truth.c!);
      expect(Math.abs(scale - 1)).toBeLessThan(0.002);
      for (const name of ['a', 'b', 'c']) {
        const e = byName(r, name);
        expect(e.ci95J).toBeGreaterThan(0);
        expect(Math.abs(e.energyJ - scale * truth[name]!)).toBeLessThan(e.ci95J!);
      }
      expect(r.energyJ).toBeCloseTo(computeRunEnergy({ window, nodes }).energyJ, 6);
      expect(partition(r)).toBeCloseTo(r.energyJ, 6);
      expect(r.rescale!).toBeGreaterThan(0.99);
      expect(r.rescale!).toBeLessThan(1.01);
      expect(r.resolutionMs).toBe(100);
    });
  });

  it('on a GH200 node counts only the module, never the GPU inside it', () => {
    // module 500 W, its GPU 350 W; phase a 0–500 ms, b after.
    const readMs = every(0, 2000, 10);
    const nodes = [
      node('gh', [meter('module0.power', (ms) => (ms < 500 ? 500 : 300), readMs), meter('gpu0.power', (ms) => (ms < 500 ? 350 : 200), readMs)], 'import'),
    ];
    const window = win(0, 2000);
    const r = computeRunPhases({ window, nodes, marks: [...phase('a', 0, 500, 'gh'), ...phase('b', 500, 2000, 'gh')] });
    expect(r.fits.map((f) => f.sensor)).toEqual(['module0.power']);
    expect(r.energyJ).toBeCloseTo(computeRunEnergy({ window, nodes }).energyJ, 9);
    // 250 J and 450 J, within the ~1 J the trapezoid adds at the 500 → 300 W step; module + GPU would be 425 and 750.
    expect(Math.abs(byName(r, 'a').energyJ - 250)).toBeLessThan(1);
    expect(Math.abs(byName(r, 'b').energyJ - 450)).toBeLessThan(1);
    expect(partition(r)).toBeCloseTo(r.energyJ, 8);
  });

  it('sums phases over several nodes, each dividing its own energy', () => {
    const readMs = every(0, 1000, 1);
    const nodes = [
      node('n1', [counter('gpu0.energy', (ms) => (ms < 500 ? 200 : 100), readMs), counter('gpu1.energy', () => 50, readMs)]),
      node('n2', [counter('gpu0.energy', (ms) => (ms < 200 ? 400 : 100), readMs)]),
    ];
    const marks = [...phase('fwd', 0, 500, 'n1'), ...phase('fwd', 0, 200, 'n2')];
    const window = win(0, 1000);
    const r = computeRunPhases({ window, nodes, marks });
    const fwd = byName(r, 'fwd');
    expect(fwd.occurrences).toBe(2);
    expect(fwd.timeS).toBeCloseTo(0.7, 12); // node-seconds
    expect(fwd.energyJ).toBeCloseTo(0.5 * 250 + 0.2 * 400, 8);
    expect(fwd.meanPowerW).toBeCloseTo((0.5 * 250 + 0.2 * 400) / 0.7, 8);
    expect(r.unmarked.timeS).toBeCloseTo(1.3, 12);
    expect(r.unmarked.energyJ).toBeCloseTo(0.5 * 150 + 0.8 * 100, 8);
    expect(r.energyJ).toBeCloseTo(computeRunEnergy({ window, nodes }).energyJ, 8);
    expect(r.fits.map((f) => `${f.node} ${f.sensor}`)).toEqual(['n1 gpu0.energy', 'n1 gpu1.energy', 'n2 gpu0.energy']);
  });

  it('counts a node listed twice once', () => {
    const n = node('n1', [counter('gpu0.energy', () => 100, every(0, 1000, 1))]);
    const r = computeRunPhases({ window: win(0, 1000), nodes: [n, n], marks: phase('a', 0, 1000) });
    expect(byName(r, 'a').energyJ).toBeCloseTo(100, 8);
    expect(r.warnings).toContain('n1: listed more than once; counted once (the first entry)');
  });

  it('reads a wrapping counter as computeRunEnergy does', () => {
    const wrapAt = 250;
    const s = counter('cpu0.energy', (ms) => (ms < 2000 ? 100 : 50), every(0, 4000, 1), 200);
    const wrapped = { ...s, v: (s.v as number[]).map((x) => x % wrapAt) };
    const nodes = [{ node: 'n1', series: [wrapped], sensors: [{ sensor: 'cpu0.energy', source: 'rapl', wrapAt }] }];
    const r = computeRunPhases({ window: win(0, 4000), nodes, marks: phase('a', 0, 2000) });
    expect(byName(r, 'a').energyJ).toBeCloseTo(200, 6);
    expect(r.unmarked.energyJ).toBeCloseTo(100, 6);
  });

  describe('steps', () => {
    // Steps of 50, 100 and 150 ms in turn at 200 W: 10, 20 and 30 J; a counter read every 100 ms.
    const ends = [0];
    for (let i = 0; i < 30; i++) ends.push(ends.at(-1)! + [50, 100, 150][i % 3]!);
    const marks = ends.map((ms) => mark('step', 'iter', ms));
    const r = computeRunPhases({ window: win(0, 3000), nodes: [node('n1', [counter('gpu0.energy', () => 200, every(0, 3000, 100))])], marks });
    const iter = r.steps.find((s) => s.name === 'iter')!;

    it('gives energy and time per step between consecutive marks', () => {
      expect(iter.count).toBe(31);
      expect(iter.energyJ.n).toBe(30);
      expect(iter.energyJ.mean).toBeCloseTo(20, 8);
      expect(iter.energyJ.p50).toBeCloseTo(20, 8);
      expect(iter.energyJ.p5).toBeCloseTo(10, 8);
      expect(iter.energyJ.p95).toBeCloseTo(30, 8);
      expect(iter.timeS.mean).toBeCloseTo(0.1, 12);
      expect(iter.energyJ.std).toBeCloseTo(Math.sqrt((20 * 100) / 29), 6);
    });

    it('flags steps shorter than two sampling intervals', () => {
      expect(iter.belowResolution).toBe(30); // every step is under 200 ms
      expect(r.warnings).toContainEqual(expect.stringMatching(/^steps iter: 30 of 30 lasted less than 2 sampling intervals/));
    });

    it('summarises values by the usual percentiles', () => {
      expect(stepStatistics([])).toEqual({ n: 0, mean: null, std: null, p5: null, p50: null, p95: null });
      expect(stepStatistics([3])).toEqual({ n: 1, mean: 3, std: 0, p5: 3, p50: 3, p95: 3 });
      expect(stepStatistics([1, 2, 3, 4, 5])).toMatchObject({ mean: 3, p50: 3, p5: 1.2, p95: 4.8 });
    });
  });

  it('claims no regression for a node without energy sensors, whose phases then have time but no known energy', () => {
    const r = computeRunPhases({ window: win(0, 1000), nodes: [node('n1', [])], marks: phase('a', 0, 500) });
    expect(r).toMatchObject({ energyJ: 0, method: 'proportional', fits: [], resolutionMs: null, rescale: null });
    expect(byName(r, 'a').timeS).toBeCloseTo(0.5, 12);
    expect(r.warnings).toContainEqual(expect.stringContaining('its energy is unknown (not 0)'));
  });

  it('rejects an empty window', () => {
    expect(() => computeRunPhases({ window: win(0, 0), nodes: [], marks: [] })).toThrow(EnergyInputError);
  });
});

describe('campaignPhases', () => {
  /** A run of phases with these self energies (J) and times (s), plus unmarked. */
  const run = (phases: Record<string, [number, number]>, unmarkedJ: number): RunPhases => {
    const list = Object.entries(phases).map(([name, [energyJ, timeS]]) => ({
      name,
      occurrences: 1,
      timeS,
      selfTimeS: timeS,
      energyJ,
      selfEnergyJ: energyJ,
      meanPowerW: energyJ / timeS,
      share: null,
      ci95J: 0,
      selfCi95J: 0,
      method: 'regression' as const,
    }));
    const energyJ = list.reduce((s, p) => s + p.energyJ, 0) + unmarkedJ;
    return {
      timeS: 10,
      energyJ,
      method: 'regression',
      resolutionMs: 100,
      rescale: 1,
      phases: list,
      unmarked: { timeS: 1, energyJ: unmarkedJ, meanPowerW: unmarkedJ, share: null, ci95J: 0, method: 'regression' },
      steps: [],
      fits: [],
      warnings: [],
    };
  };
  const configs = [
    { key: 'fast', runs: [run({ forward: [1000, 2], backward: [2000, 3], optimizer: [500, 1] }, 100), run({ forward: [1100, 2], backward: [2100, 3], optimizer: [500, 1] }, 100)] },
    { key: 'frugal', runs: [run({ forward: [900, 3], backward: [1200, 4] }, 120), run({ forward: [900, 3], backward: [1400, 4] }, 120)] },
  ];
  const result = campaignPhases(configs, { time: 'fast', energy: 'frugal' });

  it('summarises each phase per configuration, a missing phase as 0 J', () => {
    const fast = result.configurations[0]!;
    expect(fast.n).toBe(2);
    expect(fast.phases.map((p) => p.name)).toEqual(['backward', 'forward', 'optimizer', UNMARKED_PHASE]);
    expect(fast.phases[1]!.energyJ).toMatchObject({ n: 2, mean: 1050 });
    expect(fast.phases[1]!.energyJ.std).toBeCloseTo(Math.sqrt(5000), 9);
    expect(fast.phases[1]!.energyJ.ci95![1]).toBeGreaterThan(1050);
    expect(fast.phases[1]!.timeS).toMatchObject({ mean: 2 });
    const frugal = result.configurations[1]!;
    expect(frugal.phases.map((p) => p.name)).toEqual(['backward', 'forward', UNMARKED_PHASE]);
  });

  it('ranks the phases by how much of the energy difference between the optimal configurations they explain', () => {
    const c = result.comparison!;
    expect(c).toMatchObject({ runtimeOptimal: 'fast', energyOptimal: 'frugal' });
    expect(c.differenceJ).toBeCloseTo(3700 - 2320, 9);
    expect(c.phases.map((p) => p.name)).toEqual(['backward', 'optimizer', 'forward', UNMARKED_PHASE]);
    expect(c.phases[0]).toMatchObject({ runtimeOptimalJ: 2050, energyOptimalJ: 1300, differenceJ: 750 });
    expect(c.phases[0]!.shareOfDifference).toBeCloseTo(750 / 1380, 12);
    expect(c.phases[1]).toMatchObject({ energyOptimalJ: 0, differenceJ: 500 });
    expect(c.phases.reduce((s, p) => s + p.shareOfDifference!, 0)).toBeCloseTo(1, 12);
    expect(CampaignPhases.parse(result)).toEqual(result);
  });

  it('compares nothing without optimal configurations, and rejects unknown or repeated keys', () => {
    expect(campaignPhases(configs, null).comparison).toBeNull();
    expect(() => campaignPhases(configs, { time: 'fast', energy: 'nope' })).toThrow(EnergyInputError);
    expect(() => campaignPhases([configs[0]!, configs[0]!], null)).toThrow(/appears twice/);
  });

  it('gives shares of a zero difference as null', () => {
    const same = campaignPhases(configs, { time: 'fast', energy: 'fast' });
    expect(same.comparison!.differenceJ).toBe(0);
    expect(same.comparison!.phases.every((p) => p.shareOfDifference === null)).toBe(true);
  });
});

describe('the least squares behind the regression', () => {
  it('keeps powers non-negative where an unconstrained fit would not', () => {
    // y ≈ 1·x1 + 1·x2 with x2 barely informative and noise pushing it below 0: OLS gives p2 < 0.
    const rows = [
      [1, 0.1, 1.0],
      [2, 0.1, 1.9],
      [3, 0.2, 2.8],
      [4, 0.1, 4.1],
    ];
    const xtx = new Float64Array(4);
    const xty = new Float64Array(2);
    for (const [a, b, y] of rows) {
      xtx[0]! += a! * a!;
      xtx[1]! += a! * b!;
      xtx[2]! += a! * b!;
      xtx[3]! += b! * b!;
      xty[0]! += a! * y!;
      xty[1]! += b! * y!;
    }
    expect(solve(xtx, xty, 2)![1]).toBeLessThan(0);
    const p = nnls(xtx, xty, 2);
    expect(p[1]).toBe(0);
    expect(p[0]).toBeCloseTo(xty[0]! / xtx[0]!, 12); // the one-variable fit
  });

  it('finds the eigenvalues of a symmetric matrix, a zero one where columns are collinear', () => {
    const { values, vectors } = symmetricEigen(Float64Array.from([2, 1, 0, 1, 2, 0, 0, 0, 5]), 3);
    expect(values.map((v) => Number(v.toFixed(12)))).toEqual([1, 3, 5]);
    expect(Math.abs(vectors[0]![0]!)).toBeCloseTo(Math.SQRT1_2, 12);
    expect(symmetricEigen(Float64Array.from([1, 1, 1, 1]), 2).values[0]).toBeCloseTo(0, 12);
    expect(invert(Float64Array.from([1, 1, 1, 1]), 2)).toBeNull();
    expect(Array.from(invert(Float64Array.from([2, 0, 0, 4]), 2)!)).toEqual([0.5, 0, 0, 0.25]);
  });
});
