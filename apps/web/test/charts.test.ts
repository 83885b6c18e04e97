import {
  alignSeries, appendSeries, clipInterval, lastTime, markLetters, marksOf, niceStep, optimalLabel, paddedAbove, parameterEffects, paretoLayout, powerSeries, powerTraceSvg, stackedBars, ticks,
  type TelemetrySeries,
} from '@erg/web';
import { config, results, summary } from './fixtures';

describe('marks', () => {
  it('reads P T E D like the CLI', () => {
    const r = results();
    expect(r.configurations.map((c) => markLetters(marksOf(r, c)))).toEqual(['P T D', 'P E', '', '']);
  });
});

describe('Pareto plot geometry', () => {
  const L = paretoLayout(results(), 640, 400);

  it('places measured configurations only, time on x and energy on y (up is more)', () => {
    expect(L.points.map((p) => p.key)).toEqual(['n=1;w=1', 'n=1;w=2', 'n=2;w=1']);
    const [a, b] = L.points;
    expect(a!.x).toBeLessThan(b!.x); // 10 s left of 20 s
    expect(a!.y).toBeLessThan(b!.y); // 500 J above 300 J (SVG y grows downwards)
    for (const p of L.points) {
      expect(p.x).toBeGreaterThanOrEqual(L.plot.left);
      expect(p.x).toBeLessThanOrEqual(L.plot.right);
      expect(p.y).toBeGreaterThanOrEqual(L.plot.top);
      expect(p.y).toBeLessThanOrEqual(L.plot.bottom);
    }
  });

  it('draws 95 % intervals as error bars both ways around the point', () => {
    const a = L.points[0]!;
    expect(a.xBar[0]).toBeLessThan(a.x);
    expect(a.xBar[1]).toBeGreaterThan(a.x);
    expect(a.yBar[0]).toBeLessThan(a.y);
    expect(a.yBar[1]).toBeGreaterThan(a.y);
    // symmetric interval → symmetric bar
    expect(a.x - a.xBar[0]).toBeCloseTo(a.xBar[1] - a.x, 6);
  });

  it('draws the front through its points by time and labels the optima in text', () => {
    const pts = L.front.split(' ').map((s) => s.split(',').map(Number));
    expect(pts).toHaveLength(2);
    expect(pts[0]![0]).toBeLessThan(pts[1]![0]!);
    const labels = Object.fromEntries(L.points.map((p) => [p.key, p.label]));
    expect(labels).toEqual({ 'n=1;w=1': 'fastest · lowest EDP', 'n=1;w=2': 'least energy', 'n=2;w=1': null });
    expect(optimalLabel({ pareto: true, bestTime: false, bestEnergy: false, bestEdp: false })).toBeNull();
  });

  it("carries each point's place on the front under uncertainty from the results' claims", () => {
    expect(L.points.map((p) => p.status)).toEqual([null, null, null]); // results without claims
    const r = results();
    const cmp = (id: string, objective: string, reference: string, other: string, ratio: number, distinguishable: boolean) => ({
      id, objective, reference, other, ratio, interval: [ratio * 0.9, ratio * 1.1], p: 0.01, pAdjusted: distinguishable ? 0.03 : 0.2, distinguishable, n: [3, 3], note: null,
    });
    r.claims = {
      confidence: 0.95, method: 'm', family: 4, distinguishable: true, summary: 's', truncated: false, ranks: [], tradeoff: null,
      comparisons: [cmp('time:a|c', 'time', 'n=1;w=1', 'n=2;w=1', 1.2, false), cmp('energy:a|c', 'energy', 'n=1;w=1', 'n=2;w=1', 1.2, false)],
      pareto: [
        { id: 'n=1;w=1', status: 'front', against: null, tiedWith: ['n=1;w=2'], comparisons: [] },
        { id: 'n=1;w=2', status: 'front', against: null, tiedWith: ['n=1;w=1'], comparisons: [] },
        { id: 'n=2;w=1', status: 'tied_with_front', against: 'n=1;w=1', tiedWith: [], comparisons: ['time:a|c', 'energy:a|c'] },
      ],
    };
    const W = paretoLayout(r, 640, 400);
    expect(W.points.map((p) => [p.status, p.statusText])).toEqual([['front', 'front, tied with n=1;w=2'], ['front', 'front, tied with n=1;w=1'], ['tied_with_front', '≈ front (n=1;w=1)']]);
  });

  it('keeps labels inside the plot and apart', () => {
    for (const p of L.points.filter((q) => q.label)) {
      if (p.labelAnchor === 'start') expect(p.labelX + p.label!.length * 6.5).toBeLessThanOrEqual(L.plot.right + 1);
      else expect(p.labelX - p.label!.length * 6.5).toBeGreaterThanOrEqual(0);
      expect(p.labelY).toBeGreaterThanOrEqual(L.plot.top);
    }
    // The same point for every optimum: one label, joined.
    const one = results();
    one.configurations = [one.configurations[0]!];
    one.best = { time: 'n=1;w=1', energy: 'n=1;w=1', edp: 'n=1;w=1' };
    one.paretoFront = ['n=1;w=1'];
    const single = paretoLayout(one);
    expect(single.points[0]!.label).toBe('fastest · least energy · lowest EDP');
    expect(Number.isFinite(single.points[0]!.x)).toBe(true);
  });

  it('never puts an axis below 0: an interval wider than its mean is cut at the axis and marked', () => {
    const r = results();
    // Two repetitions far apart: mean ± t·s/√2 reaches below zero in both time and energy.
    r.configurations[1] = config('n=1;w=2', { n: 1, w: 2 }, 20, 300, { paretoOptimal: true, timeS: summary(20, 25, 2), energyJ: summary(300, 900, 2) });
    const W = paretoLayout(r, 640, 400);
    expect(W.xDomain[0]).toBeGreaterThanOrEqual(0);
    expect(W.yDomain[0]).toBeGreaterThanOrEqual(0);
    expect(Math.min(...W.xTicks.map((t) => t.value))).toBeGreaterThanOrEqual(0);
    expect(Math.min(...W.yTicks.map((t) => t.value))).toBeGreaterThanOrEqual(0);
    const wide = W.points.find((p) => p.key === 'n=1;w=2')!;
    expect(wide).toMatchObject({ xClipped: true, yClipped: true });
    // Cut at 0, which is where the axes begin.
    expect(wide.xBar[0]).toBeCloseTo(W.plot.left, 6);
    expect(wide.yBar[1]).toBeCloseTo(W.plot.bottom, 6);
    expect(W.points.find((p) => p.key === 'n=1;w=1')).toMatchObject({ xClipped: false, yClipped: false });
    // Narrow intervals near 0: the padding does not take the axis below 0 either.
    const near = results();
    near.configurations = [config('a', {}, 0.2, 5, { timeS: summary(0.2, 0.1), energyJ: summary(5, 4) }), config('b', {}, 1, 40)];
    const N = paretoLayout(near);
    expect(N.xTicks[0]!.value).toBeGreaterThanOrEqual(0);
    expect(N.yTicks[0]!.value).toBeGreaterThanOrEqual(0);
    expect(N.points.every((p) => !p.xClipped && !p.yClipped)).toBe(true);
  });

  it('clips intervals and pads domains at a floor', () => {
    expect(clipInterval(-5, 10)).toEqual({ lo: 0, hi: 10, clipped: true });
    expect(clipInterval(2, 10)).toEqual({ lo: 2, hi: 10, clipped: false });
    expect(paddedAbove(0, 100)).toEqual([0, 108]);
    expect(paddedAbove(50, 100)).toEqual([46, 104]);
    expect(paddedAbove(0, 0)).toEqual([0, 1]);
  });

  it('has nice ticks', () => {
    expect(niceStep(0, 100, 5)).toBe(20);
    expect(ticks(0, 1, 5)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(L.xTicks.length).toBeGreaterThan(2);
  });
});

describe('parameter effects', () => {
  it('averages each value over the other parameters, numeric values in order', () => {
    const effects = parameterEffects(results().configurations);
    expect(effects.map((e) => e.parameter)).toEqual(['n', 'w']);
    const n = effects[0]!;
    expect(n.levels.map((l) => l.value)).toEqual(['1', '2']);
    expect(n.levels[0]).toEqual({ value: '1', configurations: 2, meanEnergyJ: 400, meanTimeS: 15 });
    // n=2 has one measured configuration (n=2;w=2 has no means)
    expect(n.levels[1]).toMatchObject({ meanEnergyJ: 600, meanTimeS: 12 });
    const w = effects[1]!;
    expect(w.levels[0]).toMatchObject({ value: '1', meanEnergyJ: 550, meanTimeS: 11 });
  });

  it('skips parameters with a single value', () => {
    expect(parameterEffects([config('a', { x: 1, y: 'k' }, 1, 2), config('b', { x: 2, y: 'k' }, 2, 3)]).map((e) => e.parameter)).toEqual(['x']);
  });
});

describe('stacked energy by component', () => {
  it('stacks component means per configuration on a common scale', () => {
    const r = results();
    const L = stackedBars(r.configurations.slice(0, 3), 640, 220);
    expect(L.kinds).toEqual(['cpu', 'memory']);
    expect(L.bars).toHaveLength(3);
    const widest = L.bars[2]!; // 600 J: full width
    const last = widest.segments.at(-1)!;
    expect(last.x + last.width).toBeCloseTo(L.plot.right, 6);
    const first = L.bars[0]!;
    expect(first.segments[0]!.x).toBe(L.plot.left);
    expect(first.segments[1]!.x).toBeCloseTo(first.segments[0]!.x + first.segments[0]!.width, 6);
    expect(first.totalJ).toBe(500);
  });
});

describe('power series', () => {
  const s = (sensor: string, t: number[], v: number[], unit: string | null = 'W'): TelemetrySeries => ({ node: 'n1', sensor, source: 'model', unit, samples: t.length, t, v });

  it('keeps power series and lines them up for uPlot', () => {
    const series = powerSeries([s('cpu0.power', [1000, 2000], [10, 20]), s('cpu0.util', [1000], [50], '%'), s('gpu0.power', [1500, 2000], [5, 6], null)]);
    expect(series.map((x) => x.sensor)).toEqual(['cpu0.power', 'gpu0.power']);
    expect(alignSeries(series)).toEqual([[1, 1.5, 2], [10, null, 20], [null, 5, 6]]);
  });

  it('appends only points after each series\' last one', () => {
    const cur = [s('cpu0.power', [1000, 2000], [10, 20])];
    const next = appendSeries(cur, [s('cpu0.power', [2000, 3000], [20, 30]), s('gpu0.power', [3000], [7])]);
    expect(next[0]!.t).toEqual([1000, 2000, 3000]);
    expect(next[1]!.t).toEqual([3000]);
    expect(cur[0]!.t).toEqual([1000, 2000]); // not mutated
    expect(lastTime(next)).toBe(3000);
    expect(lastTime([])).toBeNull();
  });

  it('renders an SVG version with one polyline per series and the bands', () => {
    const svg = powerTraceSvg([s('cpu0.power', [1000, 2000, 3000], [10, 20, 15]), s('gpu<0>.power', [1000, 3000], [1, 2])], [{ label: 'workload', fromMs: 1500, toMs: 2500 }]);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.match(/<polyline class="series"/g)).toHaveLength(2);
    expect(svg).toContain('class="band"');
    expect(svg).toContain('>workload<');
    expect(svg).toContain('n1 · gpu&lt;0&gt;.power');
  });
});
