/**
 * `strategy: search` (issue 16): for sweeps too large to run whole, one decision step of a
 * multi-objective Bayesian search. Given every configuration's parameters and the runs so far, it
 * says which untried configurations to run next (as many as the free slots and the budget allow),
 * which observed configurations form the Pareto front, and when the search is over. Pure and
 * deterministic: the scheduler calls it whenever runs land, a simulation thousands of times.
 *
 * Glossary:
 *   candidate    a configuration of the sweep, with its parameters (the features the surrogate sees).
 *   tried        a candidate with a completed, pending or failed run: never proposed again.
 *   design       the first proposals: space-filling (each the farthest from everything tried).
 *   surrogate    a Gaussian process per objective over log(value) (search-gp.ts).
 *   pool         the untried candidates scored in this step: all of them up to POOL_SIZE, else the
 *                neighbours of the observed front plus a seeded sample (bounds the cost).
 *   acquisition  optimistic hypervolume improvement: what the candidate's lower confidence bound
 *                (mean − β·sd on both log objectives) adds to the hypervolume of the front.
 *   batch        picked greedily; after each pick its predicted mean joins the front and its
 *                variance-reducing effect is fantasised (kriging believer), so the next pick goes
 *                elsewhere. Runs in flight are fantasised the same way before the first pick.
 * docs/search.md explains the algorithm and what it does and does not promise.
 */
import { encodeFeatures, type Features } from './search-features';
import { paretoIndices, paretoRanks, improvement } from './search-front';
import { covariance, fitGp, predictRows, type Gp, type GpData, type GpRows } from './search-gp';
import { mixSeed, mulberry32 } from './search-random';

export { hypervolume2d } from './search-front';

/** A configuration of the sweep: its key and its sweep parameters (name → value). */
export interface SearchCandidate {
  key: string;
  parameters: Readonly<Record<string, string | number | boolean>>;
}

export interface SearchObservation {
  key: string;
  /** Each completed run's two objective values (both > 0, both minimised). */
  runs: readonly (readonly [number, number])[];
  /** Runs submitted and not finished yet. */
  pending: number;
  /** Runs that ended without figures. */
  failed?: number;
}

export interface SearchSettings {
  /** Runs per proposed configuration (≥ 1): a proposal means `repetitions` runs. */
  repetitions: number;
  /** Configurations of the space-filling first design before the surrogate takes over (≥ 1; at least 2 are always tried first). */
  initialConfigurations: number;
  /** The same seed and inputs give the same proposals. */
  seed: number;
  /** No proposal once completed, failed and in-flight runs would exceed maxRuns. */
  budget: { maxRuns: number };
}

export interface SearchStep {
  /** Keys of untried configurations to run `repetitions` times each, best first; at most `slots` runs' worth (and at most POOL_SIZE configurations). */
  propose: string[];
  /** Keys of the observed Pareto front (means of completed runs), in ascending order of the first objective. */
  front: string[];
  /** Why no proposal will ever come again: the budget is spent, or every candidate is tried; null while the search goes on. */
  stop: null | { why: 'budget' | 'exhausted'; reason: string };
  /** Candidates tried (with a completed, pending or failed run), out of `candidates`. */
  tried: number;
  candidates: number;
}

export interface SearchOptions {
  /** Runs the cluster can start now. */
  slots: number;
  /** Runs completed or failed so far (runs in flight are counted from the observations' `pending`). */
  spentRuns: number;
}

/** Untried candidates scored per step, at most (the rest wait for a later step's sample). */
export const POOL_SIZE = 1024;
/** Observations the surrogate is conditioned on, at most: the best by non-dominated rank. */
export const MODEL_SIZE = 200;
/** Observations the hyperparameters are tuned on, at most (a spread of the model's). */
const TUNE_SIZE = 100;
/** Configurations in flight, and in flight plus picks of this step, whose variance-reducing effect is fantasised, at most. */
const FLYING_SIZE = 128;
const FANTASY_SIZE = 256;
/** Optimism of the acquisition: the lower confidence bound is the mean minus β standard deviations. */
const BETA = 1;

const int = (v: number, min: number) => Number.isInteger(v) && v >= min;

function checkSettings(s: SearchSettings): void {
  if (!int(s.repetitions, 1)) throw new RangeError(`search settings: repetitions must be an integer ≥ 1, got ${s.repetitions}`);
  if (!int(s.initialConfigurations, 1)) throw new RangeError(`search settings: initialConfigurations must be an integer ≥ 1, got ${s.initialConfigurations}`);
  if (!Number.isInteger(s.seed)) throw new RangeError(`search settings: seed must be an integer, got ${s.seed}`);
  if (!int(s.budget?.maxRuns, 0)) throw new RangeError(`search settings: budget.maxRuns must be an integer ≥ 0, got ${s.budget?.maxRuns}`);
}

/** One configuration as the step sees it. */
interface Seen {
  runs: number;
  pending: number;
  failed: number;
  /** Arithmetic means of the completed runs (what the results report), and the means of their logs (what the surrogate models). */
  mean: [number, number];
  logMean: [number, number];
}

function see(candidates: readonly SearchCandidate[], observations: readonly SearchObservation[]): (Seen | undefined)[] {
  const index = new Map<string, number>();
  candidates.forEach((c, i) => {
    if (typeof c.key !== 'string') throw new RangeError(`search: candidate ${i} has no key`);
    if (index.has(c.key)) throw new RangeError(`search: candidate ${c.key} appears twice`);
    for (const [name, v] of Object.entries(c.parameters ?? {})) {
      if (!(typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)))) {
        throw new RangeError(`search: candidate ${c.key}: parameter ${name} must be a string, a boolean or a finite number, got ${String(v)}`);
      }
    }
    index.set(c.key, i);
  });
  const seen: (Seen | undefined)[] = new Array(candidates.length);
  for (const o of observations) {
    const i = index.get(o.key);
    if (i === undefined) throw new RangeError(`search: observation of ${o.key}, which is not a candidate`);
    if (seen[i]) throw new RangeError(`search: configuration ${o.key} is observed twice`);
    if (!int(o.pending, 0)) throw new RangeError(`search: configuration ${o.key}: pending must be an integer ≥ 0, got ${o.pending}`);
    const failed = o.failed ?? 0;
    if (!int(failed, 0)) throw new RangeError(`search: configuration ${o.key}: failed must be an integer ≥ 0, got ${failed}`);
    const sum = [0, 0];
    const logSum = [0, 0];
    for (const r of o.runs) {
      if (!(r.length === 2 && r[0] > 0 && r[1] > 0 && Number.isFinite(r[0]) && Number.isFinite(r[1]))) {
        throw new RangeError(`search: configuration ${o.key}: objective values must be finite and > 0, got [${r.join(', ')}]`);
      }
      for (const k of [0, 1]) {
        sum[k]! += r[k]!;
        logSum[k]! += Math.log(r[k]!);
      }
    }
    const n = o.runs.length;
    seen[i] = { runs: n, pending: o.pending, failed, mean: [sum[0]! / n, sum[1]! / n], logMean: [logSum[0]! / n, logSum[1]! / n] };
  }
  return seen;
}

export function searchStep(settings: SearchSettings, candidates: readonly SearchCandidate[], observations: readonly SearchObservation[], options: SearchOptions): SearchStep {
  checkSettings(settings);
  if (!int(options.slots, 0)) throw new RangeError(`search: slots must be an integer ≥ 0, got ${options.slots}`);
  if (!int(options.spentRuns, 0)) throw new RangeError(`search: spentRuns must be an integer ≥ 0, got ${options.spentRuns}`);
  const seen = see(candidates, observations);
  const isTried = (s: Seen | undefined) => !!s && s.runs + s.pending + s.failed > 0;
  const completed: number[] = [];
  const untried: number[] = [];
  let inFlight = 0;
  let failedOnly = 0;
  seen.forEach((s, i) => {
    if (!isTried(s)) return;
    if (s!.runs > 0) completed.push(i);
    else if (s!.pending === 0) failedOnly++;
    inFlight += s!.pending;
  });
  for (let i = 0; i < candidates.length; i++) if (!isTried(seen[i])) untried.push(i);
  const tried = candidates.length - untried.length;
  const frontIdx = paretoIndices(completed.map((i) => seen[i]!.mean)).map((k) => completed[k]!);
  const step = (propose: number[], stop: SearchStep['stop']): SearchStep => ({
    propose: propose.map((i) => candidates[i]!.key), front: frontIdx.map((i) => candidates[i]!.key), stop, tried, candidates: candidates.length,
  });

  const { repetitions, budget } = settings;
  const left = budget.maxRuns - options.spentRuns - inFlight;
  if (untried.length === 0) return step([], { why: 'exhausted', reason: `every one of the ${candidates.length} candidates has been tried` });
  if (left < repetitions) {
    return step([], {
      why: 'budget',
      reason: `the budget of ${budget.maxRuns} runs allows no more configurations: ${options.spentRuns} runs spent and ${inFlight} in flight, a configuration needs ${repetitions}`,
    });
  }
  const wanted = Math.min(Math.floor(options.slots / repetitions), Math.floor(left / repetitions), untried.length);
  if (wanted === 0) return step([], null);

  const features = encodeFeatures(candidates.map((c) => c.parameters ?? {}));
  const rng = mulberry32(mixSeed(settings.seed, tried, completed.length, inFlight));
  const pool = poolOf(candidates, untried, frontIdx, rng);
  // More slots than the pool holds: the rest wait for the next step (its pool is drawn afresh).
  const batch = Math.min(wanted, pool.length);
  // The design replaces configurations that failed without a figure; the surrogate needs two measured.
  const design = Math.max(settings.initialConfigurations, 2) + failedOnly;
  if (tried < design) return step(spaceFilling(features, pool, seen.flatMap((s, i) => (isTried(s) ? [i] : [])), Math.min(batch, design - tried), rng), null);
  if (completed.length < 2) return step([], null);
  return step(surrogatePicks(features, seen, completed, pool, batch, repetitions), null);
}

/**
 * The candidates scored this step: every untried one while they are few; else the untried
 * neighbours of the observed front (differing from a front configuration in one parameter), up to
 * half the pool, and a seeded sample of the rest.
 */
function poolOf(candidates: readonly SearchCandidate[], untried: number[], front: number[], rng: () => number): number[] {
  if (untried.length <= POOL_SIZE) return untried;
  const names = [...new Set(candidates.flatMap((c) => Object.keys(c.parameters ?? {})))];
  const value = (i: number, name: string) => (candidates[i]!.parameters ?? {})[name];
  const chosen = new Set<number>();
  for (const f of front) {
    for (const i of untried) {
      if (chosen.size >= POOL_SIZE / 2) break;
      let differ = 0;
      for (const name of names) if (value(i, name) !== value(f, name) && ++differ > 1) break;
      if (differ === 1) chosen.add(i);
    }
  }
  // Partial Fisher–Yates over the untried (a copy), skipping the neighbours already in.
  const rest = untried.filter((i) => !chosen.has(i));
  for (let k = 0; k < rest.length && chosen.size < POOL_SIZE; k++) {
    const j = k + Math.floor(rng() * (rest.length - k));
    [rest[k], rest[j]] = [rest[j]!, rest[k]!];
    chosen.add(rest[k]!);
  }
  return [...chosen].sort((a, b) => a - b);
}

function distance2(f: Features, i: number, j: number): number {
  let s = 0;
  for (let c = 0; c < f.d; c++) s += (f.x[i * f.d + c]! - f.x[j * f.d + c]!) ** 2;
  return s;
}

/** Greedy maximin: each pick the pool candidate farthest from everything tried and picked (the first, with nothing tried, at random). */
function spaceFilling(f: Features, pool: number[], tried: number[], n: number, rng: () => number): number[] {
  const nearest = new Float64Array(pool.length).fill(Infinity);
  const taken = new Uint8Array(pool.length);
  const update = (i: number) => {
    for (let p = 0; p < pool.length; p++) nearest[p] = Math.min(nearest[p]!, distance2(f, pool[p]!, i));
  };
  for (const i of tried) update(i);
  const picks: number[] = [];
  while (picks.length < n) {
    let best = -1;
    if (tried.length === 0 && picks.length === 0) best = Math.floor(rng() * pool.length);
    else for (let p = 0; p < pool.length; p++) if (!taken[p] && (best < 0 || nearest[p]! > nearest[best]!)) best = p;
    taken[best] = 1;
    picks.push(pool[best]!);
    update(pool[best]!);
  }
  return picks;
}

function rowsOf(f: Features, indices: number[]): Float64Array {
  const x = new Float64Array(indices.length * f.d);
  indices.forEach((i, r) => x.set(f.x.subarray(i * f.d, (i + 1) * f.d), r * f.d));
  return x;
}

/** The observations the surrogate is conditioned on: all, or the MODEL_SIZE best by non-dominated rank. */
function modelSet(seen: (Seen | undefined)[], completed: number[]): number[] {
  if (completed.length <= MODEL_SIZE) return completed;
  const ranks = paretoRanks(completed.map((i) => seen[i]!.logMean));
  return completed
    .map((i, k) => ({ i, rank: ranks[k]!, y: seen[i]!.logMean[0] }))
    .sort((a, b) => a.rank - b.rank || a.y - b.y || a.i - b.i)
    .slice(0, MODEL_SIZE)
    .map((e) => e.i);
}

/** One objective's surrogate, with its predictions at the rows and their covariances as fantasies accumulate. */
class Objective {
  readonly gp: Gp;
  readonly rows: GpRows;
  /** Current (fantasised) variance per row. */
  readonly variance: Float64Array;
  private readonly updates: Float64Array[] = [];

  constructor(f: Features, model: number[], tune: number[], y: (i: number) => number, runs: (i: number) => number, private readonly x: Float64Array, count: number) {
    const data = (idx: number[]): GpData => ({
      x: rowsOf(f, idx), d: f.d, group: f.group, groups: f.groups.length, y: Float64Array.from(idx, y), n: Float64Array.from(idx, runs),
    });
    this.gp = fitGp(data(model), data(tune));
    this.rows = predictRows(this.gp, x, count);
    this.variance = Float64Array.from(this.rows.variance);
  }

  /** Fantasises `repetitions` runs of row s: every row's variance shrinks by its covariance with s. */
  fantasise(s: number, repetitions: number): void {
    const count = this.variance.length;
    const cov = new Float64Array(count);
    for (let j = 0; j < count; j++) {
      let c = covariance(this.gp, this.rows, this.x, j, s);
      for (const u of this.updates) c -= u[j]! * u[s]!;
      cov[j] = c;
    }
    const scale = 1 / Math.sqrt(this.variance[s]! + (this.gp.variance * this.gp.lambda) / repetitions);
    for (let j = 0; j < count; j++) {
      cov[j] = cov[j]! * scale;
      this.variance[j] = Math.max(this.variance[j]! - cov[j]! ** 2, 1e-12);
    }
    this.updates.push(cov);
  }
}

function surrogatePicks(f: Features, seen: (Seen | undefined)[], completed: number[], pool: number[], wanted: number, repetitions: number): number[] {
  const model = modelSet(seen, completed);
  const stride = Math.max(1, model.length / TUNE_SIZE);
  const tune = Array.from({ length: Math.min(model.length, TUNE_SIZE) }, (_, k) => model[Math.floor(k * stride)]!);
  // Rows: the pool, then configurations whose only runs are in flight (fantasised, never proposed).
  const flying = seen.flatMap((s, i) => (s && s.runs === 0 && s.pending > 0 ? [i] : [])).slice(0, FLYING_SIZE);
  const rows = [...pool, ...flying];
  const x = rowsOf(f, rows);
  const objectives = [0, 1].map((k) => new Objective(f, model, tune, (i) => seen[i]!.logMean[k]!, (i) => seen[i]!.runs, x, rows.length));

  // Log objectives scaled by the observed range, so that neither dominates the acquisition.
  const lo = [0, 1].map((k) => Math.min(...completed.map((i) => seen[i]!.logMean[k]!)));
  const hi = [0, 1].map((k) => Math.max(...completed.map((i) => seen[i]!.logMean[k]!)));
  const span = [0, 1].map((k) => Math.max(hi[k]! - lo[k]!, 1e-6));
  const scaled = (k: number, v: number) => (v - lo[k]!) / span[k]!;
  const reference: [number, number] = [1.1, 1.1];
  const believed: [number, number][] = paretoIndices(completed.map((i) => seen[i]!.logMean)).map((k) => {
    const m = seen[completed[k]!]!.logMean;
    return [scaled(0, m[0]), scaled(1, m[1])];
  });
  let front = believed;
  let fantasies = 0;
  const believe = (r: number) => {
    front.push([scaled(0, objectives[0]!.rows.mean[r]!), scaled(1, objectives[1]!.rows.mean[r]!)]);
    front = paretoIndices(front).map((k) => front[k]!);
    if (fantasies++ < FANTASY_SIZE) for (const o of objectives) o.fantasise(r, repetitions);
  };
  for (let r = pool.length; r < rows.length; r++) believe(r);

  const score = (r: number) => {
    const z = [0, 1].map((k) => scaled(k, objectives[k]!.rows.mean[r]! - BETA * Math.sqrt(objectives[k]!.variance[r]!))) as [number, number];
    return improvement(front, z, reference);
  };
  // Lazy greedy: a candidate's score only falls as the batch grows (the front only grows, variances
  // only shrink, means stay), so a stale score is an upper bound, and the candidate on top whose
  // fresh score still beats every other's stale one is the greedy pick: the same batch as rescoring
  // everything after each pick, at a fraction of the cost.
  const heap = new ScoreHeap();
  for (let r = 0; r < pool.length; r++) heap.push(score(r), r);
  const picks: number[] = [];
  while (picks.length < wanted && heap.size > 0) {
    const top = heap.pop();
    const fresh = score(top.row);
    if (heap.size > 0 && !heap.beats(fresh, top.row)) {
      heap.push(fresh, top.row);
      continue;
    }
    picks.push(pool[top.row]!);
    believe(top.row);
  }
  return picks;
}

/** A max-heap of (score, row), ties to the lower row, for the lazy greedy batch. */
class ScoreHeap {
  private readonly scores: number[] = [];
  private readonly rows: number[] = [];

  get size(): number {
    return this.rows.length;
  }

  private above(i: number, j: number): boolean {
    return this.scores[i]! > this.scores[j]! || (this.scores[i] === this.scores[j] && this.rows[i]! < this.rows[j]!);
  }

  private swap(i: number, j: number): void {
    [this.scores[i], this.scores[j]] = [this.scores[j]!, this.scores[i]!];
    [this.rows[i], this.rows[j]] = [this.rows[j]!, this.rows[i]!];
  }

  /** Whether (score, row) ranks at or above the heap's top. */
  beats(score: number, row: number): boolean {
    return score > this.scores[0]! || (score === this.scores[0] && row < this.rows[0]!);
  }

  push(score: number, row: number): void {
    this.scores.push(score);
    this.rows.push(row);
    for (let i = this.rows.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!this.above(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): { score: number; row: number } {
    const top = { score: this.scores[0]!, row: this.rows[0]! };
    const lastScore = this.scores.pop()!;
    const lastRow = this.rows.pop()!;
    if (this.rows.length > 0) {
      this.scores[0] = lastScore;
      this.rows[0] = lastRow;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let best = i;
        if (l < this.rows.length && this.above(l, best)) best = l;
        if (r < this.rows.length && this.above(r, best)) best = r;
        if (best === i) break;
        this.swap(i, best);
        i = best;
      }
    }
    return top;
  }
}
