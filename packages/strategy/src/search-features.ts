/**
 * A configuration's sweep parameters as a point in [0, 1]^d, so that distances between
 * configurations mean something to the surrogate:
 * - a parameter whose values are all numbers is scaled to [0, 1] by its range, on a log scale when
 *   every value is > 0 and they span at least a decade (micro-batch 1…64, not clock 1230…1980);
 * - anything else (strings, booleans, a mix, absent in some configurations) is one-hot, each column
 *   1/√2, so that two different values are at distance 1, as the two ends of a numeric range are;
 * - a parameter with one value over all candidates carries no information and gets no column.
 * Each parameter is one group: the surrogate gives each group its own length scale.
 */
export type ParameterValue = string | number | boolean;

export interface Features {
  /** Row-major, one row of `d` numbers per candidate. */
  x: Float64Array;
  d: number;
  /** Per column, the index of its parameter group. */
  group: Int32Array;
  /** The parameters that got columns, in group order. */
  groups: string[];
}

const ONE_HOT = Math.SQRT1_2;

export function encodeFeatures(parameters: readonly Readonly<Record<string, ParameterValue>>[]): Features {
  const names = [...new Set(parameters.flatMap((p) => Object.keys(p)))].sort();
  const columns: { name: string; fill: (row: number) => number }[][] = [];
  const groups: string[] = [];
  for (const name of names) {
    const values = parameters.map((p) => (Object.hasOwn(p, name) ? p[name] : undefined));
    const numeric = values.every((v) => typeof v === 'number');
    if (numeric) {
      const nums = values as number[];
      let lo = Infinity;
      let hi = -Infinity;
      for (const v of nums) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      if (!(hi > lo)) continue;
      const log = lo > 0 && hi / lo >= 10;
      const f = log ? Math.log : (v: number) => v;
      const flo = f(lo);
      const span = f(hi) - flo;
      groups.push(name);
      columns.push([{ name, fill: (row) => (f(nums[row]!) - flo) / span }]);
      continue;
    }
    // Categorical: the value's type is part of it (the number 1 is not the string '1').
    const labels = values.map((v) => (v === undefined ? 'absent' : `${typeof v}:${String(v)}`));
    const distinct = [...new Set(labels)].sort();
    if (distinct.length < 2) continue;
    groups.push(name);
    // Two values need one column (at distance 1); more need one each.
    const used = distinct.length === 2 ? [distinct[1]!] : distinct;
    columns.push(used.map((label) => ({ name, fill: (row) => (labels[row] === label ? (distinct.length === 2 ? 1 : ONE_HOT) : 0) })));
  }
  const flat = columns.flat();
  const d = flat.length;
  const x = new Float64Array(parameters.length * d);
  for (let row = 0; row < parameters.length; row++) for (let c = 0; c < d; c++) x[row * d + c] = flat[c]!.fill(row);
  const group = new Int32Array(d);
  let c = 0;
  columns.forEach((cols, g) => cols.forEach(() => (group[c++] = g)));
  return { x, d, group, groups };
}
