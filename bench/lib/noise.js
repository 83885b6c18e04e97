// Seeded noise for the simulating benchmarks (sequential-suite.js, experiment-design.js): uniform
// draws from @erg/testkit's seeded PRNG, standard normals from them by Box–Muller (both of each
// pair used), and lognormal factors of a given mean and coefficient of variation. The same seed
// gives the same numbers on every run, so a benchmark's figures can be reproduced exactly.
'use strict';
const path = require('node:path');
const { seededRandom } = require(path.join(__dirname, '..', '..', 'packages', 'testkit', 'dist', 'seeded-random.js'));

/** A noise source of its own: `uniform()` in [0, 1), `gauss()` standard normal, `lognormal(mean, cv)`. */
function seededNoise(seed) {
  const uniform = seededRandom(seed);
  let spare = null;
  function gauss() {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    const u = 1 - uniform();
    const v = uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }
  /** A lognormal draw with mean `mean` and coefficient of variation `cv`. */
  function lognormal(mean, cv) {
    const s = Math.sqrt(Math.log(1 + cv * cv));
    return mean * Math.exp(s * gauss() - (s * s) / 2);
  }
  return { uniform, gauss, lognormal };
}

module.exports = { seededNoise };
