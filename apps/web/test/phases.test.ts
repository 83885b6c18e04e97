import { UNMARKED_PHASE } from '@erg/spec';
import {
  campaignPhaseNames, differenceBars, parseCsv, phaseBands, phasePalette, phaseRows, phasesCsv, phaseStackedBars, powerTraceSvg, runPhaseNames, stackLayout, UNMARKED,
  type TelemetrySeries,
} from '@erg/web';
import { campaignPhases, phasesView } from './fixtures';

describe('phase names and patterns', () => {
  it('names the unmarked time as the API does', () => {
    expect(UNMARKED).toBe(UNMARKED_PHASE);
  });

  it('numbers the phases by name, the same on every part of the page, the unmarked time without a pattern', () => {
    const palette = phasePalette(['train', 'load', UNMARKED, 'optimizer', 'train']);
    expect([...palette]).toEqual([['load', 0], ['optimizer', 1], ['train', 2]]);
    expect(runPhaseNames(phasesView())).toEqual(['load', 'optimizer', 'train']);
  });
});

describe('phase bands over the power trace', () => {
  const view = phasesView();
  const palette = phasePalette(runPhaseNames(view));

  it('one lane per node, a band per stretch with a phase, stretches inside none left blank', () => {
    const b = phaseBands(view, palette);
    expect(b.lanes.map((l) => l.node)).toEqual(['n1', 'n2']);
    expect(b.lanes[0]!.bands.map((x) => [x.phase, x.fromMs, x.toMs])).toEqual([['load', 1000, 3000], ['train', 3000, 5000], ['optimizer', 5000, 7000], ['train', 7000, 9000]]);
    expect(b.lanes[1]!.bands.map((x) => x.phase)).toEqual(['load', 'train']);
    // The innermost phase draws, with its nesting kept for the tooltip; its pattern is the palette's.
    expect(b.lanes[0]!.bands[2]).toMatchObject({ open: ['train', 'optimizer'], index: palette.get('optimizer') });
    expect(b.legend).toEqual([{ name: 'load', index: 0 }, { name: 'optimizer', index: 1 }, { name: 'train', index: 2 }]);
    expect(b.note).toBeNull();
  });

  it('merges adjacent stretches of the same phases only', () => {
    const b = phaseBands(view, palette);
    // train 7000–8000 and 8000–9000 are one band; train before and after optimizer stay two.
    expect(b.lanes[0]!.bands.filter((x) => x.phase === 'train')).toHaveLength(2);
  });

  it('more nodes than lanes: the first node\'s bands, with a note; a cut response says so', () => {
    const b = phaseBands({ ...view, segmentsTruncated: true }, palette, 1);
    expect(b.lanes.map((l) => l.node)).toEqual(['n1']);
    expect(b.note).toContain('Bands of n1, the first of 2 nodes');
    expect(b.note).toContain('more stretches than the API returns (11)');
  });

  it('a run whose marks are steps only has no bands', () => {
    const b = phaseBands({ segments: [{ node: 'n1', phase: null, open: [], fromMs: 0, toMs: 10 }], segmentsTruncated: false }, new Map());
    expect(b.legend).toEqual([]);
    expect(b.lanes[0]!.bands).toEqual([]);
  });

  it('the SVG export draws the bands in their patterns with a legend', () => {
    const s = (node: string): TelemetrySeries => ({ node, sensor: 'gpu0.power', source: 'nvml', unit: 'W', samples: 3, t: [0, 5000, 10_000], v: [100, 200, 100] });
    const svg = powerTraceSvg([s('n1'), s('n2')], [], 900, 360, phaseBands(view, palette));
    expect(svg.match(/class="phase-band"/g)).toHaveLength(6);
    expect(svg).toContain('<pattern id="phase-2"');
    expect(svg).toContain('data-phase="optimizer"');
    expect(svg).toContain('>train<');
    expect(svg).toContain('(blank: inside no phase)');
    expect(powerTraceSvg([s('n1')], [])).not.toContain('phase-band');
  });
});

describe('the per-phase table of a run', () => {
  it('rows as the API orders them, the unmarked time last; self shares add up to 1', () => {
    const rows = phaseRows(phasesView().phases!);
    expect(rows.map((r) => r.name)).toEqual(['train', 'optimizer', 'load', UNMARKED]);
    expect(rows[0]).toMatchObject({ energyJ: 1400, ci95J: 10, selfEnergyJ: 1000, selfCi95J: 8, share: 0.7, selfShare: 0.5, occurrences: 2 });
    expect(rows[3]).toMatchObject({ unmarked: true, occurrences: null, energyJ: 300, selfEnergyJ: 300, selfShare: 0.15 });
    expect(rows.reduce((a, r) => a + r.selfShare!, 0)).toBeCloseTo(1, 9);
  });

  it('exports as CSV, the ± empty where the split was proportional', () => {
    const [header, ...body] = parseCsv(phasesCsv(phasesView().phases!));
    expect(header).toContain('self_energy_j');
    const load = body.find((r) => r[0] === 'load')!;
    expect(load[header!.indexOf('energy_ci95_half_j')]).toBe('');
    expect(load[header!.indexOf('method')]).toBe('proportional');
    expect(body.at(-1)![0]).toBe(UNMARKED);
  });
});

describe('a campaign\'s energy by phase', () => {
  it('stacks self energies per configuration, the unmarked time on top; each stack is the configuration\'s mean energy', () => {
    const phases = campaignPhases();
    expect(campaignPhaseNames(phases)).toEqual(['load', 'optimizer', 'train', UNMARKED]);
    const L = phaseStackedBars(phases, 640, 220, ['a', 'b', 'c']);
    // c has no runs with phases; a first, as in the results table.
    expect(L.bars.map((b) => b.key)).toEqual(['a', 'b']);
    const [a, b] = L.bars;
    expect(a!.totalJ).toBe(phases.configurations[1]!.energyJ.mean);
    expect(b!.totalJ).toBe(phases.configurations[0]!.energyJ.mean);
    expect(a!.segments.map((s) => s.kind)).toEqual(['load', 'optimizer', 'train', UNMARKED]);
    expect(b!.segments.map((s) => s.kind)).toEqual(['load', 'train', UNMARKED]);
    // The unmarked time ends the stack, at the full width for the largest.
    const top = a!.segments.at(-1)!;
    expect(top.x + top.width).toBeCloseTo(L.plot.right, 6);
    expect(L.legend.map((e) => e.kind)).toEqual(['load', 'optimizer', 'train', UNMARKED]);
  });

  it('wraps a legend that does not fit on one row', () => {
    const kinds = Array.from({ length: 12 }, (_, i) => `phase-number-${i}`);
    const L = stackLayout([{ key: 'x', values: Object.fromEntries(kinds.map((k) => [k, 1])) }], kinds, 640, 220);
    const rows = new Set(L.legend.map((e) => e.y));
    expect(rows.size).toBeGreaterThan(1);
    for (const e of L.legend) expect(e.x + 18 + e.kind.length * 6.5).toBeLessThanOrEqual(640);
    expect(L.height).toBeGreaterThanOrEqual(Math.max(...L.legend.map((e) => e.y)) + 14);
  });

  it('where the energy went: the differences in the API\'s order, bars on a common scale either side of 0 J', () => {
    const B = differenceBars(campaignPhases().comparison!, 160);
    expect(B.rows.map((r) => r.name)).toEqual(['train', 'optimizer', UNMARKED, 'load']);
    expect(B.runtimeOptimalJ).toBe(2000);
    expect(B.energyOptimalJ).toBe(1400);
    expect(B.zeroX).toBe(80);
    const [train, optimizer, unmarked, load] = B.rows;
    expect(train).toMatchObject({ x: 80, width: 80, negative: false });
    expect(optimizer!.width).toBeCloseTo(24, 6);
    expect(unmarked!.width).toBe(0);
    expect(load).toMatchObject({ negative: true, width: 8, x: 72 });
    // Only positive differences: 0 J at the left edge, the whole width for the largest.
    const pos = differenceBars({ ...campaignPhases().comparison!, phases: campaignPhases().comparison!.phases.filter((p) => p.differenceJ >= 0) }, 160);
    expect(pos.zeroX).toBe(0);
    expect(pos.rows[0]!.width).toBe(160);
  });
});
