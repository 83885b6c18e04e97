'use strict';

/** A grid of `configurations` points: a × b, a the largest divisor up to 1,000 (the schema's most values per list). */
function grid(configurations) {
  let a = Math.min(configurations, 1000);
  while (configurations % a !== 0) a -= 1;
  if (configurations / a > 1000) throw new Error(`${configurations} configurations do not make a grid of a × b with a, b ≤ 1000`);
  const range = (n) => Array.from({ length: n }, (_, i) => i + 1);
  return { a: range(a), b: range(configurations / a) };
}

module.exports = { grid };
