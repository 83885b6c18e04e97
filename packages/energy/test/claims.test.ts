// The campaign's claims: each comparison's interval and p against an independent implementation
// (@stdlib's Student t, the means and variances written out here) at 1e-12, Holm's adjustment
// against its step-down definition, and what the claims say of A/A, A/B, ties, single runs,
// constant samples, many entries and entries grouped by fingerprint.
import tCdf from '@stdlib/stats-base-dists-t-cdf';
import tQuantile from '@stdlib/stats-base-dists-t-quantile';
import { seededRandom } from '@erg/testkit';
import { CampaignClaims, type Comparison } from '@erg/spec';
import { campaignClaims, campaignResults, groupEntryId, holm, MAX_CLAIM_ENTRIES, type ClaimEntry, type RunFigures } from '../src';

const run = (timeS: number | null, energyJ: number | null, extra: Partial<RunFigures> = {}): RunFigures => ({
  timeS, energyJ,
  edpJs: timeS !== null && energyJ !== null ? timeS * energyJ : null,
  ed2pJs2: timeS !== null && energyJ !== null ? timeS * timeS * energyJ : null,
  avgPowerW: timeS !== null && energyJ !== null ? energyJ / timeS : null,
  metrics: {},
  ...extra,
});

const DEFAULT = { confidence: 0.95, objectives: ['time', 'energy'] as const };

/** Standard normal draws (Box–Muller) from a seeded uniform source. */
function normals(seed: number): () => number {
  const uniform = seededRandom(seed);
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}

/** n runs around (timeS, energyJ), each figure with its own relative noise `cv`. */
function noisyRuns(z: () => number, n: number, timeS: number, energyJ: number, cv = 0.03): RunFigures[] {
  return Array.from({ length: n }, () => run(timeS * (1 + cv * z()), energyJ * (1 + cv * z())));
}

function byId(comparisons: readonly Comparison[], id: string): Comparison {
  const c = comparisons.find((x) => x.id === id);
  if (!c) throw new Error(`no comparison ${id}`);
  return c;
}

/** |a − b| within 1e-12 of b's size (absolutely below 1). */
function expectAgree(a: number, b: number): void {
  expect(Math.abs(a - b)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(b)));
}

describe('campaignClaims: each comparison against an independent computation', () => {
  const z = normals(7);
  const entries: ClaimEntry[] = [
    { id: 'a', runs: noisyRuns(z, 5, 100, 50_000, 0.04) },
    { id: 'b', runs: noisyRuns(z, 4, 108, 46_000, 0.06) },
    { id: 'c', runs: noisyRuns(z, 7, 103, 52_000, 0.02) },
  ];
  const figure = { time: (r: RunFigures) => r.timeS!, energy: (r: RunFigures) => r.energyJ!, edp: (r: RunFigures) => r.edpJs! } as const;

  /** The delta method on log(mean(x)/mean(r)), written out: means, variances, se, Welch–Satterthwaite df; @stdlib's t. */
  function reference(r: number[], x: number[], confidence: number) {
    const m = (v: number[]) => v.reduce((s, y) => s + y, 0) / v.length;
    const s2 = (v: number[]) => v.reduce((s, y) => s + (y - m(v)) ** 2, 0) / (v.length - 1);
    const ur = s2(r) / (r.length * m(r) ** 2);
    const ux = s2(x) / (x.length * m(x) ** 2);
    const se = Math.sqrt(ur + ux);
    const df = (ur + ux) ** 2 / (ur ** 2 / (r.length - 1) + ux ** 2 / (x.length - 1));
    const lr = Math.log(m(x) / m(r));
    const q = tQuantile((1 + confidence) / 2, df);
    return { ratio: m(x) / m(r), interval: [Math.exp(lr - q * se), Math.exp(lr + q * se)], p: 2 * tCdf(-Math.abs(lr / se), df) };
  }

  it.each([0.95, 0.9, 0.99])('intervals and p-values agree with @stdlib to 1e-12 at confidence %p', (confidence) => {
    const claims = campaignClaims(entries, { ...DEFAULT, confidence })!;
    expect(claims.comparisons.length).toBeGreaterThanOrEqual(6);
    for (const c of claims.comparisons) {
      const f = figure[c.objective as keyof typeof figure];
      const r = entries.find((e) => e.id === c.reference)!.runs.map(f);
      const x = entries.find((e) => e.id === c.other)!.runs.map(f);
      const want = reference(r, x, confidence);
      expectAgree(c.ratio!, want.ratio);
      expectAgree(c.interval![0], want.interval[0]!);
      expectAgree(c.interval![1], want.interval[1]!);
      expectAgree(c.p!, want.p);
      expect(c.n).toEqual([r.length, x.length]);
    }
    expect(CampaignClaims.parse(claims)).toEqual(claims);
  });

  it('makes each comparison once per objective and unordered pair, and Holm adjusts over exactly those', () => {
    const claims = campaignClaims(entries, DEFAULT)!;
    const pairs = claims.comparisons.map((c) => `${c.objective}:${[c.reference, c.other].sort().join('|')}`);
    expect(new Set(pairs).size).toBe(pairs.length);
    expect(claims.family).toBe(claims.comparisons.filter((c) => c.p !== null).length);
    const adjusted = holm(claims.comparisons.map((c) => c.p!));
    claims.comparisons.forEach((c, i) => {
      expect(c.pAdjusted).toBe(adjusted[i]);
      expect(c.distinguishable).toBe(adjusted[i]! < 0.05);
    });
    // Every id a claim names is one of the comparisons.
    const ids = new Set(claims.comparisons.map((c) => c.id));
    for (const id of [...claims.ranks.flatMap((r) => r.comparisons), ...claims.pareto.flatMap((p) => p.comparisons)]) expect(ids.has(id)).toBe(true);
  });
});

describe('campaignClaims in a blocked run order: each comparison block by block', () => {
  // Repetition r of every configuration ran side by side (block r); a step drift moves blocks 3 and 4.
  const z = normals(11);
  const drift = [1, 1, 1.4, 1.4, 1.4];
  const blockRuns = (timeS: number, energyJ: number, blocks: number[]) =>
    blocks.map((b) => run(timeS * drift[b - 1]! * (1 + 0.02 * z()), energyJ * drift[b - 1]! * (1 + 0.02 * z()), { repetition: b }));
  const entries: ClaimEntry[] = [
    { id: 'a', runs: blockRuns(100, 50_000, [1, 2, 3, 4]) },
    // b lacks block 2 and has a fifth: the pairs are blocks 1, 3 and 4.
    { id: 'b', runs: blockRuns(100, 55_000, [1, 3, 4, 5]) },
  ];
  const figure = { time: (r: RunFigures) => r.timeS!, energy: (r: RunFigures) => r.energyJ!, edp: (r: RunFigures) => r.edpJs! } as const;

  /** The paired delta method written out: dᵢ = xᵢ/m(x) − rᵢ/m(r), se² = s²(d)/n, n − 1 df; @stdlib's t. */
  function reference(r: number[], x: number[], confidence: number) {
    const m = (v: number[]) => v.reduce((s, y) => s + y, 0) / v.length;
    const d = x.map((xi, i) => xi / m(x) - r[i]! / m(r));
    const s2 = d.reduce((s, y) => s + (y - m(d)) ** 2, 0) / (d.length - 1);
    const se = Math.sqrt(s2 / d.length);
    const df = d.length - 1;
    const lr = Math.log(m(x) / m(r));
    const q = tQuantile((1 + confidence) / 2, df);
    return { ratio: m(x) / m(r), interval: [Math.exp(lr - q * se), Math.exp(lr + q * se)], p: 2 * tCdf(-Math.abs(lr / se), df) };
  }

  it.each([0.95, 0.9])('pairs the blocks both entries have, and agrees with @stdlib to 1e-12 at confidence %p', (confidence) => {
    const claims = campaignClaims(entries, { ...DEFAULT, confidence, blocked: true })!;
    expect(claims.comparisons).toHaveLength(3);
    expect(claims.method).toMatch(/paired by block/);
    for (const c of claims.comparisons) {
      expect(c.paired).toBe(true);
      expect(c.n).toEqual([3, 3]);
      const f = figure[c.objective as keyof typeof figure];
      const pick = (id: string) => entries.find((e) => e.id === id)!.runs.filter((r) => [1, 3, 4].includes(r.repetition!)).map(f);
      const want = reference(pick(c.reference), pick(c.other), confidence);
      expectAgree(c.ratio!, want.ratio);
      expectAgree(c.interval![0], want.interval[0]!);
      expectAgree(c.interval![1], want.interval[1]!);
      expectAgree(c.p!, want.p);
    }
    expect(CampaignClaims.parse(claims)).toEqual(claims);
  });

  it('finds a 10 % difference through a drift that hides it from the unpaired comparison', () => {
    const blocked = campaignClaims(entries, { ...DEFAULT, blocked: true })!;
    const unpaired = campaignClaims(entries, DEFAULT)!;
    const energy = (c: CampaignClaims) => c.comparisons.find((x) => x.objective === 'energy')!;
    expect(energy(blocked).distinguishable).toBe(true);
    expect(energy(unpaired).paired).toBe(false);
    expect(energy(unpaired).distinguishable).toBe(false);
    expect(energy(blocked).interval![1] - energy(blocked).interval![0]).toBeLessThan((energy(unpaired).interval![1] - energy(unpaired).interval![0]) / 3);
  });

  it('compares unpaired where fewer than 2 blocks have both, or the runs carry no block', () => {
    const few: ClaimEntry[] = [
      { id: 'a', runs: blockRuns(100, 50_000, [1, 2]) },
      { id: 'b', runs: blockRuns(100, 50_000, [2, 3]) },
    ];
    for (const c of campaignClaims(few, { ...DEFAULT, blocked: true })!.comparisons) {
      expect(c.paired).toBe(false);
      expect(c.n).toEqual([2, 2]);
    }
    const unknown: ClaimEntry[] = [
      { id: 'a', runs: noisyRuns(z, 3, 100, 50_000) },
      { id: 'b', runs: noisyRuns(z, 3, 100, 50_000) },
    ];
    for (const c of campaignClaims(unknown, { ...DEFAULT, blocked: true })!.comparisons) expect(c.paired).toBe(false);
  });
});

describe('holm', () => {
  /** Holm's step-down procedure at level α, by its definition: which hypotheses it rejects. */
  function stepDown(ps: readonly number[], alpha: number): boolean[] {
    const m = ps.length;
    const order = ps.map((p, i) => ({ p, i })).sort((x, y) => x.p - y.p);
    const rejected = new Array<boolean>(m).fill(false);
    for (let j = 0; j < m; j++) {
      if (order[j]!.p > alpha / (m - j)) break;
      rejected[order[j]!.i] = true;
    }
    return rejected;
  }

  it('rejects at α exactly what the step-down procedure rejects, for any α', () => {
    const uniform = seededRandom(11);
    for (let trial = 0; trial < 100; trial++) {
      const m = 1 + Math.floor(uniform() * 12);
      // Small p-values (some decisive), ties, and ones near 1.
      const ps = Array.from({ length: m }, () => (uniform() < 0.2 ? 0.5 : uniform() ** 3));
      const adjusted = holm(ps);
      for (const alpha of [0.001, 0.01, 0.05, 0.1, 0.2, uniform() * 0.3]) {
        expect(adjusted.map((p) => p <= alpha)).toEqual(stepDown(ps, alpha));
      }
      for (const p of adjusted) expect(p).toBeLessThanOrEqual(1);
      ps.forEach((p, i) => expect(adjusted[i]).toBeGreaterThanOrEqual(p));
    }
  });

  it('is the Bonferroni factor on the smallest p and never decreases along the sorted p-values', () => {
    expect(holm([0.01, 0.04, 0.03])).toEqual([0.03, 0.06, 0.06]);
    expect(holm([0.5, 0.5])).toEqual([1, 1]);
    expect(holm([])).toEqual([]);
  });
});

describe('campaignClaims: what the claims say', () => {
  it('an A/A campaign (two identical configurations) reads "no distinguishable difference"', () => {
    const z = normals(2024);
    const claims = campaignClaims([{ id: 'a', runs: noisyRuns(z, 5, 100, 50_000) }, { id: 'a-again', runs: noisyRuns(z, 5, 100, 50_000) }], DEFAULT)!;
    expect(claims.distinguishable).toBe(false);
    expect(claims.summary).toBe(`no distinguishable difference between the 2 configurations at 95 % (Holm over ${claims.family} comparisons)`);
    expect(claims.family).toBe(3); // time, energy, EDP: the front and the trade-off reuse them
    for (const r of claims.ranks) expect(r).toMatchObject({ distinguishable: false, tiedWith: [r.best === 'a' ? 'a-again' : 'a'] });
    expect(claims.tradeoff === null || claims.tradeoff.distinguishable === false).toBe(true);
    expect(claims.pareto.every((p) => p.status !== 'dominated')).toBe(true);
  });

  it('over many A/A campaigns, a difference is claimed at most about as often as 1 − confidence allows', () => {
    const z = normals(99);
    const trials = 300;
    let claimed = 0;
    for (let i = 0; i < trials; i++) {
      const claims = campaignClaims([{ id: 'a', runs: noisyRuns(z, 5, 100, 50_000) }, { id: 'b', runs: noisyRuns(z, 5, 100, 50_000) }], DEFAULT)!;
      if (claims.distinguishable) claimed++;
    }
    // Holm keeps the family-wise rate ≤ 5 %; 300 trials: ≤ 5 % + 3 standard errors.
    expect(claimed / trials).toBeLessThanOrEqual(0.05 + 3 * Math.sqrt((0.05 * 0.95) / trials));
  });

  it('an A/B campaign with a clear 20 % difference at n = 5 is distinguishable, with the ratio inside its interval', () => {
    const z = normals(5);
    const claims = campaignClaims([{ id: 'a', runs: noisyRuns(z, 5, 100, 50_000) }, { id: 'b', runs: noisyRuns(z, 5, 120, 60_000) }], DEFAULT)!;
    expect(claims.distinguishable).toBe(true);
    for (const r of claims.ranks) expect(r).toMatchObject({ best: 'a', tiedWith: [], distinguishable: true });
    expect(claims.pareto).toEqual([
      expect.objectContaining({ id: 'a', status: 'front', against: null }),
      expect.objectContaining({ id: 'b', status: 'dominated', against: 'a' }),
    ]);
    const time = byId(claims.comparisons, 'time:a|b');
    expect(time.ratio).toBeGreaterThan(1.1);
    expect(time.interval![0]).toBeLessThan(time.ratio!);
    expect(time.interval![1]).toBeGreaterThan(time.ratio!);
    expect(time.interval![0]).toBeGreaterThan(1);
    expect(claims.tradeoff).toBeNull(); // a is both fastest and most frugal
    expect(claims.summary).toBe('at 95 % (Holm over 3 comparisons): fastest a; least energy a; lowest EDP a; Pareto front of (time, energy): a (dominated: b)');
  });

  it('names who the best cannot be told apart from, and does not rank it above them', () => {
    const z = normals(3);
    const claims = campaignClaims(
      [
        { id: 'a', runs: noisyRuns(z, 5, 100, 50_000, 0.01) },
        { id: 'b', runs: noisyRuns(z, 5, 100.5, 50_200, 0.01) },
        { id: 'c', runs: noisyRuns(z, 5, 140, 70_000, 0.01) },
      ],
      DEFAULT,
    )!;
    const time = claims.ranks.find((r) => r.objective === 'time')!;
    expect(time.tiedWith).toEqual([time.best === 'a' ? 'b' : 'a']);
    expect(time.distinguishable).toBe(false);
    expect(claims.summary).toMatch(/^at 95 % \(Holm over \d+ comparisons\): fastest [ab], tied with [ab]; least energy [ab], tied with [ab]; /);
    expect(claims.summary).toMatch(/dominated: c\)$/);
  });

  it('compares an entry off the front with its closest dominator, and a front member with its neighbours', () => {
    const three = (t: number, e: number) => [run(t, e), run(t * 1.02, e * 1.01), run(t * 0.98, e * 0.99)];
    // On the front by time: f1 (10 s, 100 J), g (15, 80), f2 (20, 50). e (21, 101) is dominated by all
    // three; its worse ratio is least against g (max(21/15, 101/80) = 1.4; f1: 2.1, f2: 2.02).
    const claims = campaignClaims(
      [{ id: 'f1', runs: three(10, 100) }, { id: 'f2', runs: three(20, 50) }, { id: 'e', runs: three(21, 101) }, { id: 'g', runs: three(15, 80) }, { id: 'g2', runs: three(15.05, 80.1) }],
      DEFAULT,
    )!;
    expect(claims.pareto.find((p) => p.id === 'e')).toEqual({ id: 'e', status: 'dominated', against: 'g', tiedWith: [], comparisons: ['time:e|g', 'energy:e|g'] });
    expect(byId(claims.comparisons, 'time:e|g')).toMatchObject({ reference: 'g', other: 'e' });
    // g2 lies a hair behind g: dominated on the means, not distinguishably.
    expect(claims.pareto.find((p) => p.id === 'g2')).toMatchObject({ status: 'tied_with_front', against: 'g' });
    const g = claims.pareto.find((p) => p.id === 'g')!;
    expect(g).toMatchObject({ status: 'front', against: null, tiedWith: [] });
    expect(g.comparisons).toEqual(['time:f1|g', 'energy:f1|g', 'time:f2|g', 'energy:f2|g']);
    expect(claims.summary).toContain('Pareto front of (time, energy): f1, f2 and g (not told apart from it: g2; dominated: e)');
  });

  it('the trade-off between the fastest and the most frugal carries both intervals', () => {
    const z = normals(8);
    const claims = campaignClaims([{ id: 'fast', runs: noisyRuns(z, 6, 100, 60_000, 0.01) }, { id: 'frugal', runs: noisyRuns(z, 6, 125, 48_000, 0.01) }], DEFAULT)!;
    const t = claims.tradeoff!;
    expect(t).toMatchObject({ fastest: 'fast', mostFrugal: 'frugal', distinguishable: true, time: 'time:fast|frugal', energy: 'energy:fast|frugal' });
    const energy = byId(claims.comparisons, t.energy);
    expect(energy).toMatchObject({ reference: 'frugal', other: 'fast' });
    const time = byId(claims.comparisons, t.time);
    const pct = (x: number) => `${Number((100 * x).toFixed(Math.abs(100 * x) >= 10 ? 0 : 1))} %`;
    const saves = `${pct(1 - 1 / energy.ratio!)} energy [${pct(1 - 1 / energy.interval![0])}, ${pct(1 - 1 / energy.interval![1])}]`;
    const more = `${pct(time.ratio! - 1)} more time [${pct(time.interval![0] - 1)}, ${pct(time.interval![1] - 1)}]`;
    expect(t.statement).toBe(`choosing frugal over fast saves ${saves} for ${more}`);
    expect(claims.pareto.map((p) => p.status)).toEqual(['front', 'front']);
    expect(claims.summary).toContain(t.statement);
  });

  it('a trade-off whose times cannot be told apart is not one, and says why', () => {
    const claims = campaignClaims([{ id: 'fast', runs: [run(100, 60_000), run(104, 60_500), run(96, 59_500)] }, { id: 'frugal', runs: [run(101, 48_000), run(97, 48_500), run(105, 47_500)] }], DEFAULT)!;
    expect(claims.tradeoff).toMatchObject({ fastest: 'fast', mostFrugal: 'frugal', distinguishable: false });
    expect(claims.tradeoff!.statement).toMatch(/^no distinguishable trade-off between fast \(fastest\) and frugal \(most frugal\) at 95 %: choosing frugal saves \d+ % energy \[.*\] \(distinguishable\) for [\d.]+ % more time \[.*\] \(not distinguishable\)$/);
    expect(claims.pareto.find((p) => p.id === 'fast')).toMatchObject({ status: 'front', tiedWith: [] });
  });

  it('a configuration with one run is compared but not tested: no interval, no p, tied, with a note', () => {
    const claims = campaignClaims([{ id: 'a', runs: [run(99, 50_000), run(101, 50_500)] }, { id: 'once', runs: [run(200, 90_000)] }], DEFAULT)!;
    const time = byId(claims.comparisons, 'time:a|once');
    expect(time).toMatchObject({ ratio: 2, interval: null, p: null, pAdjusted: null, distinguishable: false, n: [2, 1] });
    expect(time.note).toBe('once has fewer than 2 runs with a measured time: its spread is unknown, so the difference cannot be tested');
    expect(claims.family).toBe(0);
    expect(claims.summary).toBe('no distinguishable difference between the 2 configurations at 95 % (Holm over 0 comparisons); none could be tested: an entry needs at least 2 runs per figure');
    expect(claims.pareto.find((p) => p.id === 'once')).toMatchObject({ status: 'tied_with_front', against: 'a' });
  });

  it('constant samples: equal means are not a difference (p = 1), different ones are certain (p = 0)', () => {
    const claims = campaignClaims(
      [{ id: 'a', runs: [run(10, 100), run(10, 100)] }, { id: 'b', runs: [run(10, 100), run(10, 100), run(10, 100)] }, { id: 'c', runs: [run(12, 100), run(12, 100)] }],
      DEFAULT,
    )!;
    expect(byId(claims.comparisons, 'time:a|b')).toMatchObject({ ratio: 1, interval: [1, 1], p: 1, distinguishable: false });
    expect(byId(claims.comparisons, 'time:a|c')).toMatchObject({ ratio: 1.2, interval: [1.2, 1.2], p: 0, pAdjusted: 0, distinguishable: true });
    expect(claims.ranks.find((r) => r.objective === 'time')).toMatchObject({ best: 'a', tiedWith: ['b'], distinguishable: false });
  });

  it('a figure whose mean is not positive gives no ratio, and says so', () => {
    const claims = campaignClaims(
      [{ id: 'a', runs: [run(10, 100, { carbonG: 0 }), run(11, 100, { carbonG: 0 })] }, { id: 'b', runs: [run(12, 100, { carbonG: 3 }), run(12, 101, { carbonG: 4 })] }],
      DEFAULT,
    )!;
    const carbon = claims.comparisons.find((c) => c.objective === 'carbon')!;
    expect(carbon).toMatchObject({ ratio: null, interval: null, p: null, distinguishable: false, note: 'a mean carbon is not positive: no ratio' });
    expect(claims.ranks.map((r) => r.objective)).toEqual(['time', 'energy', 'edp', 'carbon']);
  });

  it('needs two entries with a point', () => {
    expect(campaignClaims([{ id: 'a', runs: [run(1, 1), run(2, 2)] }, { id: 'b', runs: [run(1, null)] }, { id: 'c', runs: [] }], DEFAULT)).toBeNull();
    expect(() => campaignClaims([], { ...DEFAULT, confidence: 1 })).toThrow(/confidence/);
  });

  it(`covers at most ${MAX_CLAIM_ENTRIES} entries: those with the most runs, and says so`, () => {
    const entries: ClaimEntry[] = Array.from({ length: MAX_CLAIM_ENTRIES + 5 }, (_, i) => ({
      id: `c${String(i).padStart(3, '0')}`,
      // The first five have 2 runs, the others 3: the five are left out.
      runs: Array.from({ length: i < 5 ? 2 : 3 }, (_, k) => run(100 + i + k, 1000 + i + k)),
    }));
    const claims = campaignClaims(entries, DEFAULT)!;
    expect(claims.truncated).toBe(true);
    const covered = new Set(claims.pareto.map((p) => p.id));
    expect(covered.size).toBe(MAX_CLAIM_ENTRIES);
    for (let i = 0; i < 5; i++) expect(covered.has(`c00${i}`)).toBe(false);
    expect(claims.ranks.find((r) => r.objective === 'time')!.best).toBe('c005');
    expect(claims.summary).toContain(`(claims over the ${MAX_CLAIM_ENTRIES} with the most runs of ${MAX_CLAIM_ENTRIES + 5})`);
  });
});

describe('campaignResults carries the claims', () => {
  it('at the campaign confidence, over entry ids when grouped by fingerprint', () => {
    const z = normals(21);
    const on = (cls: string, runs: RunFigures[]) => runs.map((r) => ({ ...r, fingerprintClass: cls }));
    const classA = 'a'.repeat(64);
    const classB = 'b'.repeat(64);
    const results = campaignResults(
      [
        { key: 'x', parameters: {}, runs: [...on(classA, noisyRuns(z, 4, 100, 50_000, 0.01)), ...on(classB, noisyRuns(z, 4, 130, 65_000, 0.01))] },
        { key: 'y', parameters: {}, runs: on(classA, noisyRuns(z, 4, 101, 50_500, 0.01)) },
      ],
      { groupBy: 'fingerprint', confidence: 0.99 },
    );
    const claims = results.claims!;
    expect(claims.confidence).toBe(0.99);
    const ids = [groupEntryId('x', classA), groupEntryId('x', classB), groupEntryId('y', classA)];
    expect(claims.pareto.map((p) => p.id).sort()).toEqual([...ids].sort());
    expect(claims.ranks.find((r) => r.objective === 'time')!.best).toBe(results.best!.time);
    expect(claims.pareto.find((p) => p.id === ids[1])).toMatchObject({ status: 'dominated' });
    expect(claims.summary).toMatch(/^at 99 % \(Holm over \d+ comparisons\)/);
    // Grouped by configuration the same runs make two entries, and the default confidence.
    const plain = campaignResults([{ key: 'x', parameters: {}, runs: noisyRuns(z, 3, 100, 50_000) }, { key: 'y', parameters: {}, runs: noisyRuns(z, 3, 100, 50_000) }]);
    expect(plain.claims!.confidence).toBe(0.95);
    expect(plain.claims!.summary).toMatch(/between the 2 configurations at 95 %/);
  });
});
