// What every view of a campaign's results says of its claims and node effects (GET
// /v1/campaigns/:id/results `claims`, `nodes`; @erg/energy claims.ts and node-effects.ts compute
// them): the best per objective with who it is tied with and the ratio's interval, each entry's
// place on the Pareto front under uncertainty, the trade-off, and each node's residuals. Typed by
// the fields they read, so the generated client's types and the CLI's (tuples widened) both fit.
import { formatPercent, isNumber, NO_VALUE } from './units';

export interface ComparisonFields {
  id: string;
  objective: string;
  reference: string;
  other: string;
  ratio: number | null;
  interval: readonly number[] | null;
  p: number | null;
  pAdjusted: number | null;
  distinguishable: boolean;
  n: readonly number[];
  /** Compared block by block (a blocked run order); absent in results of an older erg. */
  paired?: boolean;
  note: string | null;
}

export interface ClaimsFields {
  confidence: number;
  family: number;
  comparisons: readonly ComparisonFields[];
  ranks: readonly { objective: string; best: string; tiedWith: readonly string[]; distinguishable: boolean; comparisons: readonly string[] }[];
  pareto: readonly { id: string; status: 'front' | 'tied_with_front' | 'dominated'; against: string | null; tiedWith: readonly string[]; comparisons: readonly string[] }[];
  tradeoff: { fastest: string; mostFrugal: string; distinguishable: boolean; statement: string } | null;
  distinguishable: boolean;
  summary: string;
  truncated: boolean;
}

export interface NodeEffectFields {
  node: string;
  runs: number;
  time: { mean: number | null; interval: readonly number[] | null };
  energy: { mean: number | null; interval: readonly number[] | null };
  distinguishable: boolean;
}

export interface NodesFields {
  nodes: number;
  effects: readonly NodeEffectFields[];
  confounded: readonly { key: string; node: string; runs: number }[];
  note: string;
}

/** At most this many entries a rank line names with their ratios; the rest are counted. */
export const TIED_SHOWN = 5;

const RANK_LABELS: Record<string, string> = { time: 'Fastest', energy: 'Least energy', edp: 'Lowest EDP', carbon: 'Least carbon', cost: 'Cheapest' };

/** A confidence as a percentage: "95 %", "99.5 %". */
export function confidenceText(confidence: number): string {
  return `${Number((100 * confidence).toPrecision(4))} %`;
}

/** What the claims were tested at, e.g. "95 %, Holm over 9 comparisons". */
export function claimsLevelText(claims: Pick<ClaimsFields, 'confidence' | 'family'> & Partial<Pick<ClaimsFields, 'comparisons'>>): string {
  // Paired where the campaign's run order has blocks: say so, it is why drift between blocks cancels.
  const paired = claims.comparisons?.some((c) => c.paired === true) ? ', paired by block' : '';
  return `${confidenceText(claims.confidence)}, Holm over ${claims.family} comparison${claims.family === 1 ? '' : 's'}${paired}`;
}

/** A ratio to three significant figures ("1.10", "0.987"), whole from 100 up. */
function ratioNumber(x: number): string {
  return Math.abs(x) >= 100 ? x.toFixed(0) : x.toPrecision(3);
}

/**
 * A comparison as "×1.10 [1.08, 1.12]": mean(other) / mean(reference) and its interval; "×2 (not
 * tested)" without an interval; "no ratio" without a ratio.
 */
export function ratioText(c: Pick<ComparisonFields, 'ratio' | 'interval'>): string {
  if (!isNumber(c.ratio)) return 'no ratio';
  const lo = c.interval?.[0];
  const hi = c.interval?.[1];
  const range = isNumber(lo) && isNumber(hi) ? ` [${ratioNumber(lo)}, ${ratioNumber(hi)}]` : ' (not tested)';
  return `×${ratioNumber(c.ratio)}${range}`;
}

/**
 * Holm's adjusted p of a tested comparison, " Holm p 0.11": why an interval that excludes 1 can
 * still be tied (the interval is the comparison's own, the decision is over the family); '' untested.
 */
export function holmPText(c: Pick<ComparisonFields, 'pAdjusted'>): string {
  if (!isNumber(c.pAdjusted)) return '';
  return ` Holm p ${c.pAdjusted < 0.001 ? '< 0.001' : c.pAdjusted.toPrecision(2)}`;
}

/** The comparisons by id. */
function comparisonsById(claims: Pick<ClaimsFields, 'comparisons'>): Map<string, ComparisonFields> {
  return new Map(claims.comparisons.map((c) => [c.id, c]));
}

/** The other entry of a comparison, seen from `id`. */
function otherOf(c: ComparisonFields, id: string): string {
  return c.reference === id ? c.other : c.reference;
}

/** A comparison seen from `id` (the best, a front member): `name ×ratio [lo, hi]` with the ratio as mean(name)/mean(id). */
function versus(c: ComparisonFields, id: string): string {
  const flipped = c.reference !== id;
  const ratio = flipped && isNumber(c.ratio) ? 1 / c.ratio : c.ratio;
  const interval = flipped && c.interval ? [1 / c.interval[1]!, 1 / c.interval[0]!] : c.interval;
  return `${otherOf(c, id)} ${ratioText({ ratio, interval })}${holmPText(c)}`;
}

/** How far the other entry of a comparison lies from `id`: its mean over id's (∞ without a ratio). */
function closeness(c: ComparisonFields, id: string): number {
  if (!isNumber(c.ratio) || c.ratio <= 0) return Number.POSITIVE_INFINITY;
  return c.reference === id ? c.ratio : 1 / c.ratio;
}

function listed(items: readonly string[]): string {
  if (items.length <= TIED_SHOWN) return items.join(', ');
  return `${items.slice(0, TIED_SHOWN).join(', ')} and ${items.length - TIED_SHOWN} more`;
}

/**
 * One line per rank: "Fastest: a, tied with b ×1.02 [0.97, 1.07]" or "Fastest: a, ahead of every
 * other (closest b ×1.10 [1.08, 1.12])". Each ratio is the other's mean over the best's.
 */
export function rankLines(claims: Pick<ClaimsFields, 'ranks' | 'comparisons'>): { objective: string; label: string; best: string; text: string }[] {
  const byId = comparisonsById(claims);
  return claims.ranks.map((r) => {
    const label = RANK_LABELS[r.objective] ?? r.objective;
    const comparisons = r.comparisons.map((id) => byId.get(id)).filter((c): c is ComparisonFields => c !== undefined);
    if (r.tiedWith.length > 0) {
      // Closest first: the entries the best is most plainly not ranked above.
      const tied = comparisons.filter((c) => !c.distinguishable).sort((x, y) => closeness(x, r.best) - closeness(y, r.best)).map((c) => versus(c, r.best));
      return { objective: r.objective, label, best: r.best, text: `${r.best}, tied with ${listed(tied)}` };
    }
    const closest = comparisons.reduce<ComparisonFields | null>((best, c) => (best === null || closeness(c, r.best) < closeness(best, r.best) ? c : best), null);
    return { objective: r.objective, label, best: r.best, text: `${r.best}, ahead of every other${closest ? ` (closest ${versus(closest, r.best)})` : ''}` };
  });
}

/** What the Pareto column says of each status. */
export const PARETO_STATUS_TEXT = { front: 'front', tied_with_front: '≈ front', dominated: 'dominated' } as const;

/** The legend of the Pareto column. */
export function paretoLegend(claims: Pick<ClaimsFields, 'confidence' | 'family'>): string {
  return `Pareto (${claimsLevelText(claims)}): front — on the front of the means; ≈ front — dominated on the means, not distinguishably; dominated — distinguishably`;
}

/**
 * An entry's place on the front in a few words: "front", "front, tied with b", "≈ front (a)",
 * "dominated by a"; '' for an entry the claims do not cover (no point, or beyond their budget).
 */
export function paretoStatusText(claims: Pick<ClaimsFields, 'pareto'>, id: string): string {
  const p = claims.pareto.find((x) => x.id === id);
  if (!p) return '';
  if (p.status === 'front') return p.tiedWith.length > 0 ? `front, tied with ${listed(p.tiedWith)}` : 'front';
  if (p.status === 'tied_with_front') return `≈ front (${p.against ?? '?'})`;
  return `dominated by ${p.against ?? '?'}`;
}

/**
 * The entries off the front with the comparisons that decided their status: "c: dominated by a —
 * time ×1.30 [1.2, 1.4], energy ×1.05 [0.98, 1.12]".
 */
export function paretoDetailLines(claims: Pick<ClaimsFields, 'pareto' | 'comparisons'>): string[] {
  const byId = comparisonsById(claims);
  return claims.pareto
    .filter((p) => p.status !== 'front' && p.against !== null)
    .map((p) => {
      const figures = p.comparisons.map((id) => byId.get(id)).filter((c): c is ComparisonFields => c !== undefined).map((c) => `${c.objective} ${ratioText(c)}${holmPText(c)}${c.distinguishable ? '' : ' (tied)'}`);
      return `${p.id}: ${paretoStatusText(claims, p.id)} — ${figures.join(', ')}`;
    });
}

/** All a results view prints of the claims, in order: the summary, then the ranks, the trade-off, the front's detail. */
export function claimsLines(claims: ClaimsFields): string[] {
  return [
    `Summary: ${claims.summary}.`,
    ...rankLines(claims).map((r) => `${r.label}: ${r.text}`),
    ...(claims.tradeoff ? [`Trade-off: ${claims.tradeoff.statement}.`] : []),
    ...paretoDetailLines(claims),
    ...(claims.truncated ? ['The claims cover the entries with the most runs only (see the summary).'] : []),
  ];
}

/** A residual "+4.1 % [+2.0 %, +6.2 %]"; "—" without one. */
export function residualText(r: { mean: number | null; interval: readonly number[] | null }): string {
  if (!isNumber(r.mean)) return NO_VALUE;
  const lo = r.interval?.[0];
  const hi = r.interval?.[1];
  const range = isNumber(lo) && isNumber(hi) ? ` [${formatPercent(lo, { signed: true })}, ${formatPercent(hi, { signed: true })}]` : '';
  return `${formatPercent(r.mean, { signed: true })}${range}`;
}

/** The node-effects table's rows: node, runs, time residual, energy residual, and "yes" where the node measures distinguishably differently. */
export function nodeEffectRows(nodes: Pick<NodesFields, 'effects'>): string[][] {
  return nodes.effects.map((e) => [e.node, String(e.runs), residualText(e.time), residualText(e.energy), e.distinguishable ? 'yes' : 'no']);
}

export const NODE_EFFECT_HEADERS = ['node', 'runs', 'time residual', 'energy residual', 'differs'] as const;

/** The confounded configurations, one line each: "c: all 3 runs on n2". */
export function confoundedLines(nodes: Pick<NodesFields, 'confounded'>): string[] {
  return nodes.confounded.map((c) => `${c.key}: all ${c.runs} runs on ${c.node}`);
}
