import { nodeTimeline } from '../src';
import { MAX_PHASE_DEPTH } from '../src/phase-timeline';

const T0 = 1_800_000_000_000;
const mark = (kind: 'begin' | 'end' | 'step', name: string, ms: number) => ({ node: 'n', kind, name, t: T0 + ms });

describe('nodeTimeline: the cost of a mark does not grow with what came before it', () => {
  test(`begins nested deeper than ${MAX_PHASE_DEPTH} are ignored with their ends, with one warning; the phases around them stay right`, () => {
    const marks = [mark('begin', 'outer', 0)];
    for (let i = 0; i < 100; i++) marks.push(mark('begin', 'deep', 1 + i));
    for (let i = 0; i < 100; i++) marks.push(mark('end', 'deep', 200 + i));
    marks.push(mark('end', 'outer', 400));
    const t = nodeTimeline('n', marks, { startMs: T0, endMs: T0 + 500 });
    expect(Math.max(...t.segments.map((s) => s.open.length))).toBe(2);
    expect(t.occurrences.get('deep')).toBe(MAX_PHASE_DEPTH - 1);
    expect(t.occurrences.get('outer')).toBe(1);
    expect(t.segments.at(-1)).toMatchObject({ fromMs: T0 + 400, toMs: T0 + 500, leaf: null });
    expect(t.warnings).toEqual([expect.stringContaining(`phases begun more than ${MAX_PHASE_DEPTH} deep ignored (with their ends): ${100 - (MAX_PHASE_DEPTH - 1)}`)]);
  });

  test('a workload that begins a phase every iteration and never ends it (100,000 begins) keeps a bounded stack', () => {
    const marks = Array.from({ length: 100_000 }, (_, i) => mark('begin', `p${i % 7}`, i / 10));
    const t = nodeTimeline('n', marks, { startMs: T0, endMs: T0 + 10_001 });
    // The stack stops at MAX_PHASE_DEPTH: every later begin is counted and ignored, not kept.
    expect(t.segments.at(-1)!.leaf).toBe(`p${(MAX_PHASE_DEPTH - 1) % 7}`);
    expect(Math.max(...t.segments.map((s) => s.open.length))).toBe(7);
    expect(t.warnings.find((w) => w.includes('deep ignored'))).toContain(`: ${100_000 - MAX_PHASE_DEPTH} (`);
    expect([...t.occurrences.values()].reduce((a, b) => a + b, 0)).toBe(MAX_PHASE_DEPTH);
  });
});
