#!/usr/bin/env node
// Benchmark: `strategy: search` (packages/strategy's searchStep) against random search at the same
// budget, on a simulated GH200-like study too large to run whole, with known truth (issue 16).
//
// The study: 1,440 configurations — ZeRO offload (none, cpu over NVLink-C2C, nvme) × sequence
// parallel degree (1, 2, 4, 8 GH200 nodes) × activation checkpointing (off, on) × GPU clock (1230,
// 1410, 1590, 1770, 1980 MHz) × micro-batch (1, 2, 4, 8) × GPU power cap (450, 600, 750 W). Per
// step: compute that scales sub-linearly with the degree and with the clock (not all of it is
// clock-bound), a third longer with checkpointing, cheaper per sample at larger micro-batches; when
// the activations and the optimizer state left on the GPU exceed its 96 GB, memory pressure slows
// it (offload and checkpointing make room); communication grows with the degree; offload
// transfers are partly hidden behind compute. Power: the GPU draws 200 W + 500 W·(f/1980)^2.6 at
// clock f while busy; a cap below that throttles the clock to what the cap allows (and costs 2 %
// in clock jitter); 250 W while it waits; Grace 100 W, more while it serves offload. So the fastest
// configuration is not the most frugal, and most are clearly worse in both.
// Each run's time and energy are the truth × lognormal noise of the CV (a run's energy noise is
// partly its time's), as in bench/adaptive.js.
//
// Per CV and budget (a share of the 1,440 configurations × repetitions, in runs), per simulated
// campaign: the search proposes, every proposed run completes, and it is asked again (SLOTS free
// slots per step) until it stops; random search runs a seeded sample of as many configurations.
// Each reports the Pareto front of its configurations' means. Reported: hypervolume ratio (HV of
// the reported configurations' true values over the true front's HV, reference point 1.1 × the
// true front's worst time and worst energy), mean and worst over the campaigns, for both; and the
// share of the true front's distinct points that the reported front has; and, apart from the noise
// in the reported means, the HV ratio of the true front of the configurations tried ("tried"). --timing: one step's time at
// 10,000 candidates × 500 observations.
//
//   npx turbo run build --filter=@erg/strategy && node bench/search.js --campaigns 100   # --help: the options
'use strict';
const path = require('node:path');
const { parseOptions } = require('./lib/options');

const share = (v) => (v > 0 && v <= 1 ? undefined : 'numbers in (0, 1]');
const { opts } = parseOptions({
  script: __filename,
  summary: '`strategy: search` (packages/strategy\'s searchStep) against random search at the same budget, on a simulated '
    + 'GH200-like study of 1,440 configurations with known truth: per CV and budget, the hypervolume ratio of the reported '
    + 'front (mean and worst campaign), the share of the true front found, and the HV ratio of the configurations tried. '
    + 'Needs @erg/strategy built.',
  options: {
    campaigns: { type: 'integer', min: 0, default: 100, quick: 4, description: 'simulated campaigns per CV and budget (0 with --timing: the step\'s time alone)' },
    cv: { type: 'number', list: true, check: (v) => (v > 0 ? undefined : 'numbers > 0'), default: [0.02, 0.05, 0.1], quick: [0.05], description: 'the noise settings (coefficients of variation)' },
    budgets: { type: 'number', list: true, check: share, default: [0.05, 0.1, 0.2], quick: [0.05, 0.1], description: 'budgets as shares of the 1,440 configurations (× repetitions, in runs)' },
    repetitions: { type: 'integer', min: 1, default: 2, description: 'repetitions per configuration' },
    slots: { type: 'integer', min: 1, default: 16, description: 'free slots per search step' },
    timing: { type: 'boolean', description: 'also one step\'s time at 10,000 candidates × 500 observations' },
    quick: { type: 'boolean', description: '4 campaigns per CV and budget at CV 5 % and budgets of 5 % and 10 % (a test runs it)' },
    json: { type: 'boolean', description: 'one line of JSON at the end (the text goes to stderr)' },
  },
  examples: ['node bench/search.js --campaigns 100', 'node bench/search.js --campaigns 0 --timing'],
});
const CAMPAIGNS = opts.campaigns;
const CVS = opts.cv;
const BUDGETS = opts.budgets;
const REPETITIONS = opts.repetitions;
const SLOTS = opts.slots;
const log = opts.json ? console.error : console.log;
const { searchStep, hypervolume2d } = require(path.join(__dirname, '..', 'packages', 'strategy', 'dist', 'search.js'));
const { seededRandom } = require(path.join(__dirname, '..', 'packages', 'testkit', 'dist', 'seeded-random.js'));

/** The configurations with their parameters and true time (s) and energy (J) per run of 1,000 steps. */
function study() {
  const OFFLOAD = {
    none: { stateGB: 80, transfer: 0, hidden: 0, hostW: 0 },
    cpu: { stateGB: 20, transfer: 0.3, hidden: 0.6, hostW: 90 },
    nvme: { stateGB: 8, transfer: 0.9, hidden: 0.3, hostW: 60 },
  };
  const configs = [];
  for (const [offload, o] of Object.entries(OFFLOAD)) {
    for (const sp of [1, 2, 4, 8]) {
      for (const ckpt of [false, true]) {
        for (const clock of [1230, 1410, 1590, 1770, 1980]) {
          for (const microBatch of [1, 2, 4, 8]) {
            for (const powerCapW of [450, 600, 750]) {
              // The clock the cap allows: 200 W + 500 W·(f/1980)^2.6 ≤ cap.
              const capClock = 1980 * Math.min(1, ((powerCapW - 200) / 500) ** (1 / 2.6));
              const f = Math.min(clock, capClock);
              const throttled = capClock < clock;
              const clockFactor = (1980 / f) ** 0.75 * (throttled ? 1.02 : 1);
              // Activations per GPU: 6 GB per sample of the micro-batch at degree 1, a quarter with checkpointing.
              const memoryGB = o.stateGB / sp ** 0.5 + (6 * microBatch * (ckpt ? 0.25 : 1)) / sp;
              const pressure = memoryGB > 96 ? 1 + 0.5 * (memoryGB / 96 - 1) + 0.3 : 1;
              const perSample = 1 + 0.6 / microBatch;
              const compute = (0.7 * perSample * (ckpt ? 1.33 : 1) * clockFactor * pressure) / sp ** 0.9;
              const comm = 0.06 * Math.log2(sp) * (sp > 4 ? 1.3 : 1);
              const exposed = (o.transfer * (1 - o.hidden)) / sp;
              const step = compute + comm + exposed;
              const gpuBusyW = 200 + 500 * (f / 1980) ** 2.6 * (0.85 + 0.05 * Math.log2(microBatch));
              const perNode = gpuBusyW * compute + 250 * (comm + exposed) + (100 + o.hostW) * step;
              configs.push({
                key: `offload=${offload},sp=${sp},ckpt=${ckpt ? 'on' : 'off'},clock=${clock},mb=${microBatch},cap=${powerCapW}`,
                parameters: { offload, sequenceParallel: sp, checkpointing: ckpt, gpuClockMHz: clock, microBatch, powerCapW },
                nodes: sp, timeS: 1000 * step, energyJ: 1000 * perNode * sp,
              });
            }
          }
        }
      }
    }
  }
  return configs;
}

/** Indices of the Pareto front (both minimised) of [a, b] points. */
function frontOf(points) {
  return points.flatMap((p, i) => (points.some((q) => q !== p && q[0] <= p[0] && q[1] <= p[1] && (q[0] < p[0] || q[1] < p[1])) ? [] : [i]));
}

function normal(u) {
  return Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
}

const CONFIGS = study();
const TRUE_FRONT = frontOf(CONFIGS.map((c) => [c.timeS, c.energyJ])).map((i) => CONFIGS[i].key);
const REFERENCE = [1.1 * Math.max(...TRUE_FRONT.map((k) => CONFIGS.find((c) => c.key === k).timeS)), 1.1 * Math.max(...TRUE_FRONT.map((k) => CONFIGS.find((c) => c.key === k).energyJ))];
const BY_KEY = new Map(CONFIGS.map((c) => [c.key, c]));
const TRUE_HV = hypervolume2d(TRUE_FRONT.map((k) => [BY_KEY.get(k).timeS, BY_KEY.get(k).energyJ]), REFERENCE);
const CANDIDATES = CONFIGS.map((c) => ({ key: c.key, parameters: c.parameters }));

// A power cap above what the GPU draws changes nothing, so several configurations share one true
// point: the share found counts the true front's distinct points that a reported configuration has.
const pointOf = (k) => `${BY_KEY.get(k).timeS},${BY_KEY.get(k).energyJ}`;
const TRUE_POINTS = new Set(TRUE_FRONT.map(pointOf));

function judge(frontKeys) {
  const hv = hypervolume2d(frontKeys.map((k) => [BY_KEY.get(k).timeS, BY_KEY.get(k).energyJ]), REFERENCE);
  const found = new Set(frontKeys.map(pointOf).filter((p) => TRUE_POINTS.has(p)));
  return { hvRatio: hv / TRUE_HV, found: found.size / TRUE_POINTS.size };
}

function drawer(cv, u) {
  const sigma = Math.sqrt(Math.log(1 + cv * cv));
  return (c) => {
    const tn = Math.exp(sigma * normal(u) - (sigma * sigma) / 2);
    const en = Math.exp(sigma * normal(u) - (sigma * sigma) / 2);
    return [c.timeS * tn, c.energyJ * Math.sqrt(tn) * Math.sqrt(en)];
  };
}

function simulateSearch(cv, maxRuns, seed) {
  const draw = drawer(cv, seededRandom(seed));
  const settings = { repetitions: REPETITIONS, initialConfigurations: Math.max(8, Math.round(maxRuns / REPETITIONS / 6)), seed, budget: { maxRuns } };
  const observed = new Map();
  let spentRuns = 0;
  let s;
  for (let round = 0; round < 10_000; round++) {
    s = searchStep(settings, CANDIDATES, [...observed.values()], { slots: SLOTS, spentRuns });
    if (s.stop || s.propose.length === 0) break;
    for (const key of s.propose) {
      observed.set(key, { key, runs: Array.from({ length: REPETITIONS }, () => draw(BY_KEY.get(key))), pending: 0 });
      spentRuns += REPETITIONS;
    }
  }
  // What the search reached, apart from the noise in the reported means: the true front of the configurations it tried.
  const tried = [...observed.keys()];
  const reached = frontOf(tried.map((k) => [BY_KEY.get(k).timeS, BY_KEY.get(k).energyJ])).map((i) => tried[i]);
  return { ...judge(s.front), triedHvRatio: judge(reached).hvRatio, runs: spentRuns, stop: s.stop?.why ?? 'none' };
}

function simulateRandom(cv, maxRuns, seed) {
  const u = seededRandom(seed + 7_777_777);
  const draw = drawer(cv, u);
  const order = CONFIGS.map((_, i) => i);
  const n = Math.floor(maxRuns / REPETITIONS);
  for (let k = 0; k < n; k++) {
    const j = k + Math.floor(u() * (order.length - k));
    [order[k], order[j]] = [order[j], order[k]];
  }
  const chosen = order.slice(0, n).map((i) => CONFIGS[i]);
  const means = chosen.map((c) => {
    const runs = Array.from({ length: REPETITIONS }, () => draw(c));
    return [0, 1].map((k) => runs.reduce((s, r) => s + r[k], 0) / runs.length);
  });
  const reached = frontOf(chosen.map((c) => [c.timeS, c.energyJ])).map((i) => chosen[i].key);
  return { ...judge(frontOf(means).map((i) => chosen[i].key)), triedHvRatio: judge(reached).hvRatio, runs: n * REPETITIONS };
}

/** One step at 10,000 candidates × 500 observations (a synthetic space of 6 parameters). */
function timing() {
  const u = seededRandom(5);
  const candidates = [];
  for (let i = 0; i < 10_000; i++) {
    candidates.push({ key: `c${i}`, parameters: { a: i % 10, b: Math.floor(i / 10) % 10, c: Math.floor(i / 100) % 10, d: ['x', 'y', 'z', 'w', 'v'][Math.floor(i / 1000) % 5], e: Math.floor(i / 5000) === 1, f: 2 ** (i % 7) } });
  }
  const truth = (p) => [Math.exp(0.1 * p.a + 0.05 * p.b + 0.3 * Math.log2(p.f)), Math.exp(0.1 * (9 - p.a) + 0.02 * p.c + (p.e ? 0.2 : 0))];
  const observations = [];
  while (observations.length < 500) {
    const c = candidates[Math.floor(u() * candidates.length)];
    if (observations.some((o) => o.key === c.key)) continue;
    observations.push({ key: c.key, runs: [truth(c.parameters), truth(c.parameters)].map(([a, b]) => [a * (1 + 0.05 * normal(u)), b * (1 + 0.05 * normal(u))]), pending: 0 });
  }
  const inFlight = observations.slice(0, 32).map((o) => ({ ...o, runs: [], pending: 2 }));
  const all = [...inFlight, ...observations.slice(32)];
  const settings = { repetitions: 2, initialConfigurations: 20, seed: 1, budget: { maxRuns: 100_000 } };
  const times = [];
  for (const slots of [16, 64, 256]) {
    searchStep(settings, candidates, all, { slots, spentRuns: 1000 });
    const t0 = process.hrtime.bigint();
    const reps = 5;
    for (let r = 0; r < reps; r++) searchStep({ ...settings, seed: r }, candidates, all, { slots, spentRuns: 1000 });
    times.push({ slots, ms: Number(process.hrtime.bigint() - t0) / 1e6 / reps });
  }
  return { candidates: candidates.length, observations: all.length, inFlight: inFlight.length, perStep: times };
}

const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
const results = [];
log(`study: ${CONFIGS.length} configurations, ${TRUE_FRONT.length} on the true front (${TRUE_POINTS.size} distinct points); ${REPETITIONS} repetitions per configuration, ${SLOTS} slots per step`);
for (const cv of CAMPAIGNS > 0 ? CVS : []) {
  for (const share of BUDGETS) {
    const maxRuns = Math.round(share * CONFIGS.length) * REPETITIONS;
    const seeds = Array.from({ length: CAMPAIGNS }, (_, i) => 100_000 * Math.round(cv * 100) + 1000 * Math.round(share * 100) + i);
    const search = seeds.map((seed) => simulateSearch(cv, maxRuns, seed));
    const random = seeds.map((seed) => simulateRandom(cv, maxRuns, seed));
    const row = {
      cv, budgetShare: share, maxRuns, campaigns: CAMPAIGNS,
      search: { hvRatio: mean(search.map((r) => r.hvRatio)), hvRatioWorst: Math.min(...search.map((r) => r.hvRatio)), frontFound: mean(search.map((r) => r.found)), triedHvRatio: mean(search.map((r) => r.triedHvRatio)), runs: mean(search.map((r) => r.runs)) },
      random: { hvRatio: mean(random.map((r) => r.hvRatio)), hvRatioWorst: Math.min(...random.map((r) => r.hvRatio)), frontFound: mean(random.map((r) => r.found)), triedHvRatio: mean(random.map((r) => r.triedHvRatio)), runs: mean(random.map((r) => r.runs)) },
      searchBeatsRandom: mean(seeds.map((_, i) => Number(search[i].hvRatio > random[i].hvRatio))),
    };
    results.push(row);
    log(
      `CV ${(cv * 100).toFixed(0)} %, budget ${(share * 100).toFixed(0)} % (${maxRuns} runs): search HV ratio ${row.search.hvRatio.toFixed(3)} (worst ${row.search.hvRatioWorst.toFixed(3)}), ` +
        `front found ${(row.search.frontFound * 100).toFixed(1)} %, tried ${row.search.triedHvRatio.toFixed(3)} | random ${row.random.hvRatio.toFixed(3)} (worst ${row.random.hvRatioWorst.toFixed(3)}), front found ${(row.random.frontFound * 100).toFixed(1)} %, tried ${row.random.triedHvRatio.toFixed(3)} | search better in ${(row.searchBeatsRandom * 100).toFixed(0)} % of campaigns`,
    );
  }
}
let time = null;
if (opts.timing) {
  time = timing();
  log(`one step, ${time.candidates} candidates × ${time.observations} observations (${time.inFlight} in flight): ${time.perStep.map((t) => `${t.slots} slots ${t.ms.toFixed(0)} ms`).join(', ')}`);
}
if (opts.json) console.log(JSON.stringify({ configurations: CONFIGS.length, trueFront: TRUE_FRONT.length, trueFrontPoints: TRUE_POINTS.size, repetitions: REPETITIONS, slots: SLOTS, results, timing: time }));
