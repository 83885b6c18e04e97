/**
 * Dense linear algebra for a handful of unknowns (a run's phase labels: rarely more than a
 * dozen), on the normal equations: a k×k matrix is a Float64Array of k² values, row-major.
 * Plain O(k³) methods, which at these sizes cost nothing beside reading the samples.
 * Internal to @erg/energy.
 */

/** Solves A x = b (A k×k) by Gaussian elimination with partial pivoting; null when A is singular. */
export function solve(a: Float64Array, b: Float64Array, k: number): Float64Array | null {
  const m = Float64Array.from(a);
  const x = Float64Array.from(b);
  const scale = maxAbs(a);
  for (let col = 0; col < k; col++) {
    let pivot = col;
    for (let r = col + 1; r < k; r++) if (Math.abs(m[r * k + col]!) > Math.abs(m[pivot * k + col]!)) pivot = r;
    if (!(Math.abs(m[pivot * k + col]!) > 1e-14 * scale)) return null;
    if (pivot !== col) {
      for (let c = 0; c < k; c++) [m[col * k + c], m[pivot * k + c]] = [m[pivot * k + c]!, m[col * k + c]!];
      [x[col], x[pivot]] = [x[pivot]!, x[col]!];
    }
    const d = m[col * k + col]!;
    for (let r = col + 1; r < k; r++) {
      const f = m[r * k + col]! / d;
      if (f === 0) continue;
      for (let c = col; c < k; c++) m[r * k + c]! -= f * m[col * k + c]!;
      x[r]! -= f * x[col]!;
    }
  }
  for (let r = k - 1; r >= 0; r--) {
    let s = x[r]!;
    for (let c = r + 1; c < k; c++) s -= m[r * k + c]! * x[c]!;
    x[r] = s / m[r * k + r]!;
  }
  return x;
}

/** A⁻¹ (A k×k), column by column; null when A is singular. */
export function invert(a: Float64Array, k: number): Float64Array | null {
  const inv = new Float64Array(k * k);
  for (let c = 0; c < k; c++) {
    const e = new Float64Array(k);
    e[c] = 1;
    const col = solve(a, e, k);
    if (!col) return null;
    for (let r = 0; r < k; r++) inv[r * k + c] = col[r]!;
  }
  return inv;
}

/**
 * Non-negative least squares on the normal equations — minimises ‖Xp − y‖² subject to p ≥ 0,
 * given XᵀX (k×k) and Xᵀy — by Lawson and Hanson's active-set method. Powers cannot be negative,
 * and an unconstrained fit of noisy readings happily makes a short phase's power negative to
 * explain a neighbour's excess.
 */
export function nnls(xtx: Float64Array, xty: Float64Array, k: number): Float64Array {
  const p = new Float64Array(k);
  const passive = new Array<boolean>(k).fill(false);
  const tol = 1e-12 * Math.max(maxAbs(xty), Number.MIN_VALUE);
  // Each outer step frees one unknown; the inner steps only ever bind some again, so 3k bounds both.
  for (let outer = 0; outer < 3 * k; outer++) {
    const w = gradient(xtx, xty, p, k);
    let best = -1;
    for (let j = 0; j < k; j++) if (!passive[j] && w[j]! > tol && (best < 0 || w[j]! > w[best]!)) best = j;
    if (best < 0) break;
    passive[best] = true;
    for (let inner = 0; inner <= k; inner++) {
      const s = solvePassive(xtx, xty, passive, k);
      if (!s) {
        // The freed unknown is a combination of the free ones: it cannot improve the fit.
        passive[best] = false;
        break;
      }
      let alpha = 1;
      for (let j = 0; j < k; j++) if (passive[j] && s[j]! <= 0) alpha = Math.min(alpha, p[j]! / (p[j]! - s[j]!));
      for (let j = 0; j < k; j++) p[j] = passive[j] ? p[j]! + alpha * (s[j]! - p[j]!) : 0;
      if (alpha === 1) break;
      for (let j = 0; j < k; j++) {
        if (passive[j] && p[j]! <= 1e-15 * Math.max(1, Math.abs(s[j]!))) {
          passive[j] = false;
          p[j] = 0;
        }
      }
    }
  }
  return p;
}

/** Xᵀy − XᵀX p: the direction in which each unknown would lower the residual. */
function gradient(xtx: Float64Array, xty: Float64Array, p: Float64Array, k: number): Float64Array {
  const w = new Float64Array(k);
  for (let r = 0; r < k; r++) {
    let s = xty[r]!;
    for (let c = 0; c < k; c++) s -= xtx[r * k + c]! * p[c]!;
    w[r] = s;
  }
  return w;
}

/** The least-squares solution over the passive unknowns (the others held at 0); null when their submatrix is singular. */
function solvePassive(xtx: Float64Array, xty: Float64Array, passive: boolean[], k: number): Float64Array | null {
  const idx: number[] = [];
  for (let j = 0; j < k; j++) if (passive[j]) idx.push(j);
  const n = idx.length;
  const a = new Float64Array(n * n);
  const b = new Float64Array(n);
  for (let r = 0; r < n; r++) {
    b[r] = xty[idx[r]!]!;
    for (let c = 0; c < n; c++) a[r * n + c] = xtx[idx[r]! * k + idx[c]!]!;
  }
  const sub = solve(a, b, n);
  if (!sub) return null;
  const s = new Float64Array(k);
  for (let r = 0; r < n; r++) s[idx[r]!] = sub[r]!;
  return s;
}

/** Eigenvalues (ascending) and unit eigenvectors (vectors[i] belongs to values[i]) of a symmetric k×k matrix, by cyclic Jacobi rotations. */
export function symmetricEigen(a: Float64Array, k: number): { values: number[]; vectors: number[][] } {
  const m = Float64Array.from(a);
  const v = new Float64Array(k * k);
  for (let i = 0; i < k; i++) v[i * k + i] = 1;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < k; p++) for (let q = p + 1; q < k; q++) off += m[p * k + q]! ** 2;
    if (off <= 1e-30 * Math.max(1, frobeniusSq(m))) break;
    for (let p = 0; p < k; p++) {
      for (let q = p + 1; q < k; q++) {
        const apq = m[p * k + q]!;
        if (apq === 0) continue;
        const theta = (m[q * k + q]! - m[p * k + p]!) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let r = 0; r < k; r++) {
          const arp = m[r * k + p]!;
          const arq = m[r * k + q]!;
          m[r * k + p] = c * arp - s * arq;
          m[r * k + q] = s * arp + c * arq;
        }
        for (let r = 0; r < k; r++) {
          const apr = m[p * k + r]!;
          const aqr = m[q * k + r]!;
          m[p * k + r] = c * apr - s * aqr;
          m[q * k + r] = s * apr + c * aqr;
        }
        for (let r = 0; r < k; r++) {
          const vrp = v[r * k + p]!;
          const vrq = v[r * k + q]!;
          v[r * k + p] = c * vrp - s * vrq;
          v[r * k + q] = s * vrp + c * vrq;
        }
      }
    }
  }
  const order = [...Array(k).keys()].sort((i, j) => m[i * k + i]! - m[j * k + j]!);
  return {
    values: order.map((i) => m[i * k + i]!),
    vectors: order.map((i) => Array.from({ length: k }, (_, r) => v[r * k + i]!)),
  };
}

function maxAbs(a: Float64Array): number {
  let m = 0;
  for (const x of a) m = Math.max(m, Math.abs(x));
  return m;
}

function frobeniusSq(a: Float64Array): number {
  let s = 0;
  for (const x of a) s += x * x;
  return s;
}
