/**
 * The search's surrogate: a Gaussian process regression of one objective's log over the features,
 * with a Matérn 5/2 kernel and one length scale per parameter (automatic relevance), a constant
 * mean, and noise λ/n for a configuration measured n times. The signal variance is profiled out of
 * the marginal likelihood; the length scales and λ are chosen on a small grid and one pass of
 * coordinate search over it (no gradients: the step must be deterministic and cheap, and a grid
 * cannot wander off). Exact inference, O(n³) in the observations it is given: the caller bounds n.
 */

export interface GpData {
  /** Row-major features of the observed configurations, `d` columns. */
  x: Float64Array;
  d: number;
  /** Per column, its parameter group (one length scale per group). */
  group: Int32Array;
  groups: number;
  /** The objective's mean log per observed configuration. */
  y: Float64Array;
  /** Completed runs per observed configuration (its noise is λ / n). */
  n: Float64Array;
}

export interface Gp {
  /** Length scale per group, and the noise ratio λ. */
  lengthScales: Float64Array;
  lambda: number;
  /** Signal variance on the log scale. */
  variance: number;
  mean: number;
  data: GpData;
  /** Cholesky factor of R + Λ (row-major lower triangle), and (R + Λ)⁻¹ (y − mean). */
  chol: Float64Array;
  alpha: Float64Array;
}

const SQRT5 = Math.sqrt(5);

function matern(r2: number): number {
  const r = Math.sqrt(r2);
  return (1 + SQRT5 * r + (5 / 3) * r2) * Math.exp(-SQRT5 * r);
}

/** Kernel between row i of a and row j of b (both `d` columns), inverse squared length scale per column. */
function kernel(a: Float64Array, i: number, b: Float64Array, j: number, inv2: Float64Array): number {
  const d = inv2.length;
  let r2 = 0;
  const ai = i * d;
  const bj = j * d;
  for (let c = 0; c < d; c++) {
    const diff = a[ai + c]! - b[bj + c]!;
    r2 += diff * diff * inv2[c]!;
  }
  return matern(r2);
}

function inverseSquared(data: GpData, lengthScales: Float64Array): Float64Array {
  const inv2 = new Float64Array(data.d);
  for (let c = 0; c < data.d; c++) inv2[c] = 1 / lengthScales[data.group[c]!]! ** 2;
  return inv2;
}

/** In-place Cholesky of a symmetric positive-definite m×m matrix (lower triangle); false if it is not. */
function cholesky(a: Float64Array, m: number): boolean {
  for (let j = 0; j < m; j++) {
    let s = a[j * m + j]!;
    for (let k = 0; k < j; k++) s -= a[j * m + k]! ** 2;
    if (!(s > 0)) return false;
    const ljj = Math.sqrt(s);
    a[j * m + j] = ljj;
    for (let i = j + 1; i < m; i++) {
      let t = a[i * m + j]!;
      for (let k = 0; k < j; k++) t -= a[i * m + k]! * a[j * m + k]!;
      a[i * m + j] = t / ljj;
    }
  }
  return true;
}

/** Solves L z = b in place (forward substitution). */
export function forward(l: Float64Array, m: number, b: Float64Array): void {
  for (let i = 0; i < m; i++) {
    let s = b[i]!;
    const row = i * m;
    for (let k = 0; k < i; k++) s -= l[row + k]! * b[k]!;
    b[i] = s / l[row + i]!;
  }
}

function backward(l: Float64Array, m: number, b: Float64Array): void {
  for (let i = m - 1; i >= 0; i--) {
    let s = b[i]!;
    for (let k = i + 1; k < m; k++) s -= l[k * m + i]! * b[k]!;
    b[i] = s / l[i * m + i]!;
  }
}

interface Factor {
  chol: Float64Array;
  /** L⁻¹ (y − mean). */
  z: Float64Array;
  logDet: number;
}

function factor(data: GpData, lengthScales: Float64Array, lambda: number, mean: number): Factor | null {
  const m = data.y.length;
  const inv2 = inverseSquared(data, lengthScales);
  const a = new Float64Array(m * m);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < i; j++) a[i * m + j] = kernel(data.x, i, data.x, j, inv2);
    a[i * m + i] = 1 + lambda / data.n[i]! + 1e-8;
  }
  if (!cholesky(a, m)) return null;
  const z = new Float64Array(m);
  for (let i = 0; i < m; i++) z[i] = data.y[i]! - mean;
  forward(a, m, z);
  let logDet = 0;
  for (let i = 0; i < m; i++) logDet += 2 * Math.log(a[i * m + i]!);
  return { chol: a, z, logDet };
}

/** Negative log marginal likelihood with the signal variance at its maximum (profiled), up to a constant. */
function objective(f: Factor | null): number {
  if (!f) return Infinity;
  const m = f.z.length;
  let q = 0;
  for (let i = 0; i < m; i++) q += f.z[i]! ** 2;
  return (m / 2) * Math.log(Math.max(q / m, 1e-300)) + f.logDet / 2;
}

const SCALES = [0.15, 0.3, 0.6, 1.2, 2.4];
const LAMBDAS = [1e-3, 1e-2, 0.05, 0.2, 0.8];
const MOVES = [0.5, 2, 8];

/**
 * Chooses the hyperparameters on `tune` (a subset of the data, to bound the cost) and returns the
 * process conditioned on all of `data`.
 */
export function fitGp(data: GpData, tune: GpData): Gp {
  const meanOf = (d: GpData) => d.y.reduce((s, v) => s + v, 0) / Math.max(1, d.y.length);
  const tuneMean = meanOf(tune);
  let best = { scales: new Float64Array(data.groups).fill(0.6), lambda: 0.05, value: Infinity };
  for (const s of SCALES) {
    for (const lambda of LAMBDAS) {
      const scales = new Float64Array(data.groups).fill(s);
      const value = objective(factor(tune, scales, lambda, tuneMean));
      if (value < best.value) best = { scales, lambda, value };
    }
  }
  // One pass of coordinate search: a parameter that does not matter gets a long length scale.
  for (let g = 0; g < data.groups; g++) {
    for (const move of MOVES) {
      const scales = Float64Array.from(best.scales);
      scales[g] = scales[g]! * move;
      const value = objective(factor(tune, scales, best.lambda, tuneMean));
      if (value < best.value) best = { scales, lambda: best.lambda, value };
    }
  }
  for (const lambda of LAMBDAS) {
    const value = objective(factor(tune, best.scales, lambda, tuneMean));
    if (value < best.value) best = { ...best, lambda, value };
  }
  const mean = meanOf(data);
  let lambda = best.lambda;
  let f = factor(data, best.scales, lambda, mean);
  // Duplicated features with tiny noise can be singular: more noise until it is not.
  while (!f) f = factor(data, best.scales, (lambda = lambda * 10 + 1e-6), mean);
  const m = data.y.length;
  let q = 0;
  for (let i = 0; i < m; i++) q += f.z[i]! ** 2;
  const alpha = Float64Array.from(f.z);
  backward(f.chol, m, alpha);
  return { lengthScales: best.scales, lambda, variance: Math.max(q / m, 1e-12), mean, data, chol: f.chol, alpha };
}

/**
 * Predictions at rows of `x` (same columns as the data): the posterior mean, and for each row the
 * vector L⁻¹k it needs for posterior variances and covariances (rows × m, row-major), from which
 * the caller derives its batch's covariances without refactoring.
 */
export interface GpRows {
  mean: Float64Array;
  /** Posterior variance of the latent value (without the run-to-run noise). */
  variance: Float64Array;
  /** Row-major L⁻¹ k(x_row, data), rows × m. */
  v: Float64Array;
  m: number;
  inv2: Float64Array;
}

export function predictRows(gp: Gp, x: Float64Array, rows: number): GpRows {
  const { data } = gp;
  const m = data.y.length;
  const inv2 = inverseSquared(data, gp.lengthScales);
  const mean = new Float64Array(rows);
  const variance = new Float64Array(rows);
  const v = new Float64Array(rows * m);
  const k = new Float64Array(m);
  for (let r = 0; r < rows; r++) {
    let mu = gp.mean;
    for (let i = 0; i < m; i++) {
      k[i] = kernel(x, r, data.x, i, inv2);
      mu += k[i]! * gp.alpha[i]!;
    }
    mean[r] = mu;
    forward(gp.chol, m, k);
    let q = 0;
    for (let i = 0; i < m; i++) q += k[i]! ** 2;
    variance[r] = gp.variance * Math.max(1 - q, 1e-9);
    v.set(k, r * m);
  }
  return { mean, variance, v, m, inv2 };
}

/** Posterior covariance of two predicted rows (before any fantasised observation). */
export function covariance(gp: Gp, p: GpRows, x: Float64Array, i: number, j: number): number {
  let dot = 0;
  const m = p.m;
  for (let c = 0; c < m; c++) dot += p.v[i * m + c]! * p.v[j * m + c]!;
  return gp.variance * (kernel(x, i, x, j, p.inv2) - dot);
}
