import { figureSeries, figureSpan, EDGE_MARGIN_MS } from '../src/run-figures';

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
