#!/usr/bin/env node
// Benchmark: the adaptive strategy (packages/strategy's plan) against the full grid at 5
// repetitions, on simulated GH200-like studies with known truth (issue 16 §3).
//
// The study: 48 configurations — ZeRO offload (none, cpu over NVLink-C2C, nvme) × sequence
// parallel degree (1, 2, 4, 8 GH200 nodes) × activation checkpointing (off, on) × GPU clock
// (1410, 1980 MHz). Per step: compute that scales sub-linearly with the degree, slower at the low
// clock (not all of it is clock-bound) and a third longer with checkpointing; communication that
// grows with the degree; offload transfers partly hidden behind compute. Power: the GPU at 600 W
// busy at the high clock and 400 W at the low one, 250 W while it waits; Grace at 100 W, more
// while it serves offload. Energy adds every node's. So the fastest configuration (degree 8,
// high clock) is not the most frugal (degree 1, low clock), and many are clearly worse in both.
// Each run's time and energy are the truth × lognormal noise of the setting's CV (independent
// for time and energy; a run's energy noise is partly its time's).
//
// Per CV setting and simulated campaign: the grid runs every configuration 5 times; adaptive
// starts each at minRepetitions and plans round by round (every planned run completes before the
// next plan) until it stops. Each ends with its Pareto front on the means (adaptive: of the
// configurations it did not drop) and its energy-optimal configuration (least mean energy).
// Reported: F1 of the front against the true front, the share of campaigns that chose the truly
// energy-optimal configuration, runs and node-hours used against the grid's.
//
// Also reported: the grid at 20 repetitions (4× its runs), the F1 this study allows with far more
// runs; and each front's hypervolume ratio (its configurations' true figures against the true
// front's, both minimised, reference 1.1 × the worst true time and energy).
//
//   npx turbo run build --filter=@erg/strategy && node bench/adaptive.js --campaigns 200   # --help: the options
'use strict';
const path = require('node:path');
const { parseOptions } = require('./lib/options');

const { opts } = parseOptions({
  script: __filename,
  summary: 'the adaptive strategy (packages/strategy\'s plan) against the full grid at 5 repetitions, on simulated GH200-like '
    + 'studies of 48 configurations with known truth: F1 of the Pareto front found, the share of campaigns choosing the truly '
    + 'energy-optimal configuration, runs and node-hours against the grid\'s. Needs @erg/strategy built.',
  options: {
    campaigns: { type: 'integer', min: 0, default: 200, quick: 10, description: 'simulated campaigns per CV setting' },
    min: { type: 'integer', min: 1, default: 2, description: 'minRepetitions of the plan' },
    max: { type: 'integer', min: 1, default: 8, description: 'maxRepetitions of the plan' },
    target: { type: 'number', above: 0, default: 0.03, description: 'targetRelativeHalfWidth of the plan' },
    confidence: { type: 'number', default: 0.95, check: (v) => (v > 0 && v < 1 ? undefined : 'a number between 0 and 1'), description: 'confidence of the plan' },
    futility: { type: 'boolean', description: 'stop repeating a configuration when even maxRepetitions would decide nothing (the plan\'s futility setting)' },
    screening: { type: 'boolean', description: 'a configuration may be dropped after its first run with the pooled spread (the plan\'s screening setting)' },
    quick: { type: 'boolean', description: '10 campaigns per setting (a test runs it; about a second)' },
    json: { type: 'boolean', description: 'one line of JSON at the end (the text goes to stderr)' },
  },
  examples: ['node bench/adaptive.js --campaigns 200', 'node bench/adaptive.js --screening --futility --max 10 --target 0.05'],
});
const CAMPAIGNS = opts.campaigns;
const CVS = [0.02, 0.05, 0.1];
const GRID_REPETITIONS = 5;
const log = opts.json ? console.error : console.log;
const { plan } = require(path.join(__dirname, '..', 'packages', 'strategy', 'dist', 'plan.js'));
const { hypervolume2d } = require(path.join(__dirname, '..', 'packages', 'strategy', 'dist', 'search.js'));
const { seededRandom } = require(path.join(__dirname, '..', 'packages', 'testkit', 'dist', 'seeded-random.js'));

const SETTINGS = { minRepetitions: opts.min, maxRepetitions: opts.max, targetRelativeHalfWidth: opts.target, confidence: opts.confidence, futility: opts.futility, screening: opts.screening };

/** The 48 configurations with their true time (s) and energy (J) per run of 1,000 steps. */
function study() {
  // Offload frees GPU memory for a larger micro-batch (compute more efficient) at the price of
  // transfers, part of them hidden behind compute, and of Grace / NVMe power.
  const OFFLOAD = {
    none: { efficiency: 1, transfer: 0, hidden: 0, hostW: 0 },
    cpu: { efficiency: 0.86, transfer: 0.3, hidden: 0.6, hostW: 90 },
    nvme: { efficiency: 0.8, transfer: 0.9, hidden: 0.3, hostW: 60 },
  };
  const configs = [];
  for (const [offload, o] of Object.entries(OFFLOAD)) {
    for (const sp of [1, 2, 4, 8]) {
      for (const ckpt of [false, true]) {
        for (const clock of [1410, 1980]) {
          // Checkpointing recomputes a third of the forward pass, and its larger micro-batch wins back a little.
          const compute = (o.efficiency * (ckpt ? 1.2 : 1) * (clock === 1980 ? 1 : 1.22)) / sp ** 0.9;
          const comm = 0.06 * Math.log2(sp) * (sp > 4 ? 1.3 : 1);
          const exposed = o.transfer * (1 - o.hidden) / sp;
          const step = compute + comm + exposed;
          const gpuBusyW = clock === 1980 ? 600 : 400;
          const perNode = gpuBusyW * compute + 250 * (comm + exposed) + (100 + o.hostW) * step;
          configs.push({ key: `offload=${offload},sp=${sp},ckpt=${ckpt ? 'on' : 'off'},clock=${clock}`, nodes: sp, timeS: 1000 * step, energyJ: 1000 * perNode * sp });
        }
      }
    }
  }
  return configs;
}

/** Keys of the Pareto front (both minimised) of points { key, a, b }. */
function front(points) {
  return points.filter((p) => !points.some((q) => q !== p && q.a <= p.a && q.b <= p.b && (q.a < p.a || q.b < p.b))).map((p) => p.key);
}

function f1(found, truth) {
  const t = new Set(truth);
  const hit = found.filter((k) => t.has(k)).length;
  return found.length + truth.length === 0 ? 1 : (2 * hit) / (found.length + truth.length);
}

function normal(u) {
  return Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
}

function simulate(cv, seed) {
  const u = seededRandom(seed);
  const sigma = Math.sqrt(Math.log(1 + cv * cv));
  const configs = study();
  const draw = (c) => {
    const tn = Math.exp(sigma * normal(u) - sigma * sigma / 2);
    const en = Math.exp(sigma * normal(u) - sigma * sigma / 2);
    return [c.timeS * tn, c.energyJ * Math.sqrt(tn) * Math.sqrt(en)];
  };
  const mean = (runs, i) => runs.reduce((s, r) => s + r[i], 0) / runs.length;
  const truthFront = front(configs.map((c) => ({ key: c.key, a: c.timeS, b: c.energyJ })));
  const truthFrugal = configs.reduce((a, b) => (b.energyJ < a.energyJ ? b : a)).key;
  const byKey = new Map(configs.map((c) => [c.key, c]));
  const reference = [1.1 * Math.max(...configs.map((c) => c.timeS)), 1.1 * Math.max(...configs.map((c) => c.energyJ))];
  const hvOf = (keys) => hypervolume2d(keys.map((k) => [byKey.get(k).timeS, byKey.get(k).energyJ]), reference);
  const hvTrue = hvOf(truthFront);
  const nodeHours = (c, n) => (n * c.timeS * c.nodes) / 3600;

  // The grid.
  const grid = configs.map((c) => ({ c, runs: Array.from({ length: GRID_REPETITIONS }, () => draw(c)) }));
  const gridPoints = grid.map((g) => ({ key: g.c.key, a: mean(g.runs, 0), b: mean(g.runs, 1) }));
  const gridFrugal = gridPoints.reduce((a, b) => (b.b < a.b ? b : a)).key;
  const gridNodeHours = grid.reduce((s, g) => s + nodeHours(g.c, g.runs.length), 0);
  const large = configs.map((c) => ({ key: c.key, runs: Array.from({ length: 4 * GRID_REPETITIONS }, () => draw(c)) }));
  const largeFront = front(large.map((g) => ({ key: g.key, a: mean(g.runs, 0), b: mean(g.runs, 1) })));

  // Adaptive, round by round.
  const state = new Map(configs.map((c) => [c.key, { c, runs: [], previous: undefined }]));
  let spent = { runs: 0, nodeHours: 0, energyKWh: 0 };
  let p;
  for (let round = 0; round < 100; round++) {
    p = plan(SETTINGS, [...state.values()].map((s) => ({ key: s.c.key, runs: s.runs, pending: 0, ...(s.previous ? { previous: s.previous } : {}) })), spent);
    for (const d of p.configurations) state.get(d.key).previous = d;
    if (p.stop || p.submit.length === 0) break;
    for (const { key, runs } of p.submit) {
      const s = state.get(key);
      for (let k = 0; k < runs; k++) {
        const r = draw(s.c);
        s.runs.push(r);
        spent = { runs: spent.runs + 1, nodeHours: spent.nodeHours + (r[0] * s.c.nodes) / 3600, energyKWh: spent.energyKWh + r[1] / 3.6e6 };
      }
    }
  }
  const kept = [...state.values()].filter((s) => s.previous?.status !== 'dropped');
  const points = kept.map((s) => ({ key: s.c.key, a: mean(s.runs, 0), b: mean(s.runs, 1) }));
  const frugal = points.reduce((a, b) => (b.b < a.b ? b : a)).key;
  const dropped = [...state.values()].filter((s) => s.previous?.status === 'dropped');
  return {
    grid: { f1: f1(front(gridPoints), truthFront), hv: hvOf(front(gridPoints)) / hvTrue, frugal: gridFrugal === truthFrugal, runs: configs.length * GRID_REPETITIONS, nodeHours: gridNodeHours },
    grid20: { f1: f1(largeFront, truthFront) },
    adaptive: {
      f1: f1(front(points), truthFront), hv: hvOf(front(points)) / hvTrue, frugal: frugal === truthFrugal, runs: spent.runs, nodeHours: spent.nodeHours,
      // A configuration on the true front that was dropped: the error racing must keep rare.
      frontDropped: dropped.filter((s) => truthFront.includes(s.c.key)).length,
      stop: p.stop?.why ?? 'rounds',
    },
  };
}

const results = [];
for (const cv of CVS) {
  const runs = Array.from({ length: CAMPAIGNS }, (_, i) => simulate(cv, 1000 * Math.round(cv * 100) + i));
  const avg = (f) => runs.reduce((s, r) => s + f(r), 0) / runs.length;
  const row = {
    cv,
    campaigns: CAMPAIGNS,
    grid: { f1: avg((r) => r.grid.f1), hypervolumeRatio: avg((r) => r.grid.hv), frugalChosen: avg((r) => Number(r.grid.frugal)), runs: avg((r) => r.grid.runs) },
    grid20: { f1: avg((r) => r.grid20.f1) },
    adaptive: {
      f1: avg((r) => r.adaptive.f1), hypervolumeRatio: avg((r) => r.adaptive.hv), f1Min: Math.min(...runs.map((r) => r.adaptive.f1)), frugalChosen: avg((r) => Number(r.adaptive.frugal)), runs: avg((r) => r.adaptive.runs),
      runsShare: avg((r) => r.adaptive.runs / r.grid.runs), nodeHoursShare: avg((r) => r.adaptive.nodeHours / r.grid.nodeHours),
      frontConfigurationsDropped: avg((r) => r.adaptive.frontDropped),
    },
  };
  results.push(row);
  log(
    `CV ${(cv * 100).toFixed(0)} %: grid F1 ${row.grid.f1.toFixed(3)} (20 repetitions: ${row.grid20.f1.toFixed(3)}), HV ${row.grid.hypervolumeRatio.toFixed(4)}, frugal ${(row.grid.frugalChosen * 100).toFixed(1)} % | ` +
      `adaptive F1 ${row.adaptive.f1.toFixed(3)} (min ${row.adaptive.f1Min.toFixed(2)}), HV ${row.adaptive.hypervolumeRatio.toFixed(4)}, ` +
      `frugal ${(row.adaptive.frugalChosen * 100).toFixed(1)} %, runs ${row.adaptive.runs.toFixed(1)} (${(row.adaptive.runsShare * 100).toFixed(1)} % of the grid's), ` +
      `node-hours ${(row.adaptive.nodeHoursShare * 100).toFixed(1)} %, true-front configurations dropped ${row.adaptive.frontConfigurationsDropped.toFixed(3)}`,
  );
}
if (opts.json) console.log(JSON.stringify({ settings: SETTINGS, gridRepetitions: GRID_REPETITIONS, results }));
