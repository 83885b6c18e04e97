#!/usr/bin/env node
// Benchmark: regression suites with sequential testing (packages/regress's sequentialVerdictFor and
// decideLook) against the fixed design at the same maximum, on simulated suite runs with known
// truth (issue 16 §3).
//
// A suite run: 4 configurations (like n × precision of a GEMM suite), each judged on time and
// energy (8 tests), candidate against a baseline campaign. Every run's time and energy are the
// truth × lognormal noise of the setting's CV (GH200-like: 2, 5, 10 %), independently. Two truths:
// no change (every "regressed" is a false regression) and +10 % energy in every configuration
// (time unchanged; "regressed" is a detection). Reported per CV and maximum M:
// - sequential (O'Brien–Fleming-type and Pocock-type spending): starts at minRepetitions (3) per
//   configuration, adds one repetition to the undecided configurations after each look, up to M;
//   alpha is the run's (split over its 8 tests);
// - fixed, per test: today's design, M repetitions, every test at alpha (the run's false-regression
//   rate is then up to 8 × alpha where the threshold does not bind);
// - fixed, per run: M repetitions, each test at alpha / 8 (Bonferroni, as the sequential design).
// Baselines: "full" — M repetitions (a pinned baseline, or the suite's first run, which a
// sequential suite runs at the maximum); "chained" (sequential only) — last-passing as erg does
// it: each no-change run that passes becomes the next run's baseline with the repetitions it
// stopped at, and the +10 % run is judged against the baseline of its turn.
//
//   npx turbo run build --filter=@erg/regress && node bench/sequential-suite.js      # --help: the options
'use strict';
const path = require('node:path');
const { parseOptions } = require('./lib/options');

const { opts } = parseOptions({
  script: __filename,
  summary: 'regression suites with sequential testing (packages/regress\'s sequentialVerdictFor and decideLook, '
    + 'O\'Brien–Fleming- and Pocock-type spending) against the fixed design at the same maximum, on simulated suite runs of 4 '
    + 'configurations × time and energy with known truth: per CV and maximum, false regressions without a change, detection '
    + 'of +10 % energy, and repetitions per suite run, against full and chained (last-passing) baselines. Needs @erg/regress '
    + 'built.',
  options: {
    runs: { type: 'integer', min: 1, default: 2000, quick: 200, description: 'simulated suite runs per setting' },
    seed: { type: 'integer', default: 16, description: 'seed of the simulated noise' },
    quick: { type: 'boolean', description: '200 suite runs per setting and maximum M = 10 only (else 5, 10 and 20) (a unit test runs it)' },
    json: { type: 'boolean', description: 'one line of JSON at the end (the text goes to stderr)' },
  },
  examples: ['node bench/sequential-suite.js', 'node bench/sequential-suite.js --runs 500 --seed 7'],
});
const RUNS = opts.runs;
const CVS = [0.02, 0.05, 0.1];
const MAXES = opts.quick ? [10] : [5, 10, 20];
const CONFIGURATIONS = 4;
const METRICS = ['time', 'energy'];
const TESTS = CONFIGURATIONS * METRICS.length;
const CHANGE = 0.1;
const MIN = 3;
const log = opts.json ? console.error : console.log;
const R = require(path.join(__dirname, '..', 'packages', 'regress', 'dist', 'index.js'));
const { seededNoise } = require('./lib/noise');

const { lognormal } = seededNoise(opts.seed);
/** n lognormal draws with mean `mean` and coefficient of variation `cv`. */
function draw(n, mean, cv) {
  return Array.from({ length: n }, () => lognormal(mean, cv));
}
const TRUTH = { time: 12, energy: 9000 }; // s and J of one run (the same for every configuration: only ratios matter)

/** One campaign's figures: per configuration, n runs of each metric. */
function campaign(n, cv, energyChange) {
  return Array.from({ length: CONFIGURATIONS }, () => ({ time: draw(n, TRUTH.time, cv), energy: draw(n, TRUTH.energy * (1 + energyChange), cv), n }));
}

function policyOf(max, spending) {
  const fixed = { threshold: 0.05, alpha: 0.05, minRepetitions: MIN, maxCv: 0.25 };
  return spending ? { ...fixed, sequential: { maxRepetitions: max, spending, beta: 0.1 } } : fixed;
}

/** A sequential suite run against `baseline`; returns its status, runs used and the candidate's figures. */
function sequentialRun(baseline, cv, energyChange, policy) {
  const cand = campaign(MIN, cv, energyChange);
  for (let look = 1; ; look++) {
    const looks = cand.map((c, i) => ({
      key: String(i), repetitions: c.n, verdicts: METRICS.map((m) => R.sequentialVerdictFor(m, baseline[i][m], c[m], c.n, policy, TESTS)),
    }));
    const d = R.decideLook(looks);
    if (d.next === 'stop') {
      const status = R.campaignVerdict(looks.map((l) => ({ key: l.key, verdicts: l.verdicts.map((v) => v.verdict) }))).status;
      return { status, runs: cand.reduce((a, c) => a + c.n, 0), looks: look, candidate: cand };
    }
    for (const k of d.undecided) {
      const c = cand[Number(k)];
      c.n++;
      c.time.push(...draw(1, TRUTH.time, cv));
      c.energy.push(...draw(1, TRUTH.energy * (1 + energyChange), cv));
    }
  }
}

function fixedRun(baseline, cv, energyChange, max, alpha) {
  const cand = campaign(max, cv, energyChange);
  const policy = { ...policyOf(max), alpha };
  const status = R.campaignVerdict(cand.map((c, i) => ({ key: String(i), verdicts: METRICS.map((m) => R.verdictFor(m, baseline[i][m], c[m], policy)) }))).status;
  return { status, runs: CONFIGURATIONS * max };
}

function tally() {
  return { falseRegressions: 0, detections: 0, runsNoChange: 0, runsChange: 0, looks: 0 };
}
function rates(t) {
  return {
    falseRegression: t.falseRegressions / RUNS, detection: t.detections / RUNS,
    meanRuns: t.runsNoChange / RUNS, meanRunsChanged: t.runsChange / RUNS, ...(t.looks ? { meanLooks: t.looks / RUNS } : {}),
  };
}

const results = [];
for (const cv of CVS) {
  for (const max of MAXES) {
    const row = { cv, max, fixedRuns: CONFIGURATIONS * max };
    for (const spending of ['obrien-fleming', 'pocock']) {
      const policy = policyOf(max, spending);
      const full = tally();
      for (let i = 0; i < RUNS; i++) {
        const h0 = sequentialRun(campaign(max, cv, 0), cv, 0, policy);
        const h1 = sequentialRun(campaign(max, cv, 0), cv, CHANGE, policy);
        if (h0.status === 'regressed') full.falseRegressions++;
        if (h1.status === 'regressed') full.detections++;
        full.runsNoChange += h0.runs;
        full.runsChange += h1.runs;
        full.looks += h0.looks;
      }
      const chained = tally();
      let baseline = campaign(max, cv, 0);
      for (let i = 0; i < RUNS; i++) {
        const h1 = sequentialRun(baseline, cv, CHANGE, policy);
        const h0 = sequentialRun(baseline, cv, 0, policy);
        if (h0.status === 'regressed') chained.falseRegressions++;
        if (h1.status === 'regressed') chained.detections++;
        chained.runsNoChange += h0.runs;
        chained.runsChange += h1.runs;
        chained.looks += h0.looks;
        if (h0.status === 'pass' || h0.status === 'improved') baseline = h0.candidate;
      }
      row[spending] = { full: rates(full), chained: rates(chained) };
    }
    for (const [name, alpha] of [['fixedPerTest', 0.05], ['fixedPerRun', 0.05 / TESTS]]) {
      const t = tally();
      for (let i = 0; i < RUNS; i++) {
        const h0 = fixedRun(campaign(max, cv, 0), cv, 0, max, alpha);
        const h1 = fixedRun(campaign(max, cv, 0), cv, CHANGE, max, alpha);
        if (h0.status === 'regressed') t.falseRegressions++;
        if (h1.status === 'regressed') t.detections++;
        t.runsNoChange += h0.runs;
        t.runsChange += h1.runs;
      }
      row[name] = rates(t);
    }
    results.push(row);
  }
}

const pct = (x) => `${(100 * x).toFixed(1)} %`.padStart(7);
const runs = (x, of) => `${x.toFixed(1)} (${Math.round((100 * x) / of)} %)`.padStart(12);
log(`${RUNS} simulated suite runs per setting and truth; ${CONFIGURATIONS} configurations × time and energy; min ${MIN} repetitions; threshold 5 %, alpha 0.05, beta 0.1; +${100 * CHANGE} % energy`);
log('  CV    M  design                      false regr.  detect +10 %   runs (no change)  runs (+10 %)');
for (const r of results) {
  const line = (name, x) => log(`${String(r.cv * 100).padStart(3)} % ${String(r.max).padStart(3)}  ${name.padEnd(28)}${pct(x.falseRegression)}      ${pct(x.detection)}   ${runs(x.meanRuns, r.fixedRuns)}  ${runs(x.meanRunsChanged, r.fixedRuns)}`);
  line('sequential OBF, full base', r['obrien-fleming'].full);
  line('sequential OBF, chained', r['obrien-fleming'].chained);
  line('sequential Pocock, full base', r.pocock.full);
  line('sequential Pocock, chained', r.pocock.chained);
  line('fixed, alpha per test', r.fixedPerTest);
  line('fixed, alpha per run', r.fixedPerRun);
}
if (opts.json) console.log(JSON.stringify({ runs: RUNS, configurations: CONFIGURATIONS, minRepetitions: MIN, change: CHANGE, results }));
