#!/usr/bin/env node
// Benchmark: how often a campaign's results report a difference that is not there, by run order
// and by how the results claim it (issue 26). Simulated campaigns with a known truth, judged by
// erg's own code: the run order is @erg/sweep's campaignRunOrder (and nodeForRun for node balance),
// the results are @erg/energy's campaignResults (best, claims with Holm, node effects).
//
// Scenarios (every run's time and energy are its configuration's truth × lognormal noise of CV 3 %):
// - aa-drift: A/A — 2 identical configurations × 4 repetitions, one run at a time; from a run drawn
//   at random (never the first), every later run takes 40 % longer and uses 40 % more energy: the
//   node got busier halfway (the issue's own A/A test saw 1.3–1.8× between identical configurations).
// - aa4-drift: the same with 4 identical configurations.
// - aa-nodes: A/A on 2 nodes, the second drawing 5 % more power (its energy 5 % higher, time equal):
//   under configuration-major each configuration lands on one node (what a scheduler packing
//   consecutive jobs does); with node balance (design.nodes) the runs follow the Latin square.
// - aa-ramp: A/A with a gradual drift instead: run k of N is 40 % × k/(N − 1) slower.
// - ab-stable, ab-drift, ab8-drift: A/B — B uses 10 % more energy (time equal) — without drift, under
//   aa-drift's drift, and under it with 8 repetitions; a detection is the claims finding B's energy
//   distinguishably higher.
// Designs: configuration-major (erg before issue 26; the claims then compare unpaired, Welch),
// randomized blocks with the claims unpaired, and randomized blocks with the claims block by block
// (paired: what erg does for a blocked order), each
// judged by two rules: point — the point estimates as erg gave them (a fastest and a most frugal are
// always named; reported as a difference when the best and another entry's means are more than 5 %
// apart, a reader's rule of thumb), and claims — some comparison of the claims is distinguishable at
// 95 % after Holm. A/A rows: the share of campaigns reporting a false difference; ab-drift: the
// share detecting the true one.
//
//   npx turbo run build --filter=@erg/energy --filter=@erg/sweep && node bench/experiment-design.js   # --help: the options
'use strict';
const path = require('node:path');
const { parseOptions } = require('./lib/options');

const { opts } = parseOptions({
  script: __filename,
  summary: "simulated A/A and A/B campaigns under drift and node effects, judged by erg's own run order (@erg/sweep) and results (@erg/energy): "
    + 'how often configuration-major order and point estimates report a false difference, and how often randomized blocks and the claims '
    + '(intervals, Holm) do; and how often the claims detect a true 10 % difference. Needs @erg/energy and @erg/sweep built.',
  options: {
    campaigns: { type: 'integer', min: 1, default: 2000, quick: 200, description: 'simulated campaigns per scenario and design' },
    seed: { type: 'integer', default: 26, description: 'seed of the simulated noise, drift and run-order seeds' },
    quick: { type: 'boolean', description: '200 campaigns per scenario and design (a unit test runs it)' },
    json: { type: 'boolean', description: 'one line of JSON at the end (the text goes to stderr)' },
  },
  examples: ['node bench/experiment-design.js', 'node bench/experiment-design.js --campaigns 500 --seed 7'],
});
const log = opts.json ? console.error : console.log;
const root = path.join(__dirname, '..');
const { campaignResults } = require(path.join(root, 'packages', 'energy', 'dist', 'index.js'));
const { campaignRunOrder, nodeForRun } = require(path.join(root, 'packages', 'sweep', 'dist', 'index.js'));
const { seededNoise } = require('./lib/noise');


const CV = 0.03;
const REPETITIONS = 4;
const DRIFT = 0.4;
const NODE_EFFECT = 0.05;
const AB_ENERGY = 0.1;
const POINT_RULE = 0.05;
const CONFIDENCE = 0.95;
const TRUTH = { timeS: 10, powerW: 300 };

const { uniform, lognormal } = seededNoise(opts.seed);
/** A lognormal factor of mean 1 and coefficient of variation `cv`. */
function noise(cv) {
  return lognormal(1, cv);
}

const SCENARIOS = {
  'aa-drift': { configurations: 2, drift: true, nodes: 1, energyChange: [0, 0] },
  'aa4-drift': { configurations: 4, drift: true, nodes: 1, energyChange: [0, 0, 0, 0] },
  'aa-nodes': { configurations: 2, drift: false, nodes: 2, energyChange: [0, 0] },
  'aa-ramp': { configurations: 2, drift: 'ramp', nodes: 1, energyChange: [0, 0] },
  'ab-stable': { configurations: 2, drift: false, nodes: 1, energyChange: [0, AB_ENERGY] },
  'ab-drift': { configurations: 2, drift: true, nodes: 1, energyChange: [0, AB_ENERGY] },
  'ab8-drift': { configurations: 2, drift: true, nodes: 1, energyChange: [0, AB_ENERGY], repetitions: 8 },
};
/** The run order, and whether the claims compare block by block (as campaignResultsView does for a blocked order) or unpaired. */
const DESIGNS = [
  { order: 'configuration-major', blocked: false, label: 'configuration-major' },
  { order: 'randomized-blocks', blocked: false, label: 'blocks, unpaired' },
  { order: 'randomized-blocks', blocked: true, label: 'blocks, paired' },
];

/**
 * One simulated campaign: its runs in the design's order, each with the drift of its place and
 * the effect of its node; returns the configurations' runs as campaignResults takes them.
 */
function simulate(scenario, order) {
  const K = scenario.configurations;
  const R = scenario.repetitions ?? REPETITIONS;
  const total = K * R;
  const design = { order, seed: Math.floor(uniform() * 2 ** 31) };
  // The drift starts at a run drawn at random, never the first: a step the campaign runs into.
  const driftFrom = scenario.drift === true ? 1 + Math.floor(uniform() * (total - 1)) : Infinity;
  const nodes = Array.from({ length: scenario.nodes }, (_, i) => `node${i + 1}`);
  const configs = Array.from({ length: K }, (_, i) => ({ key: `c${i}`, parameters: { c: i }, runs: [] }));
  let place = 0;
  for (const { configuration, repetition } of campaignRunOrder(K, R, design)) {
    // Under node balance the Latin square; else each configuration stays on one node (packed).
    const node = nodes.length === 1 ? nodes[0] : order === 'randomized-blocks' ? nodeForRun(nodes, configuration, repetition) : nodes[configuration % nodes.length];
    const drift = scenario.drift === 'ramp' ? 1 + (DRIFT * place) / (total - 1) : place >= driftFrom ? 1 + DRIFT : 1;
    const power = node === 'node2' ? 1 + NODE_EFFECT : 1;
    const timeS = TRUTH.timeS * drift * noise(CV);
    // A busier node takes longer at the same power; the configuration's and the node's power, each run's noise.
    const energyJ = TRUTH.powerW * (1 + scenario.energyChange[configuration]) * power * noise(CV) * timeS;
    configs[configuration].runs.push({ timeS, energyJ, edpJs: energyJ * timeS, ed2pJs2: energyJ * timeS * timeS, avgPowerW: energyJ / timeS, metrics: {}, node, repetition });
    place++;
  }
  return configs;
}

/** The point rule: the best's mean and some other entry's more than POINT_RULE apart, in time or energy. */
function pointDifference(results) {
  for (const figure of ['timeS', 'energyJ']) {
    const means = results.configurations.map((c) => c[figure].mean);
    const least = Math.min(...means);
    if (means.some((m) => m > least * (1 + POINT_RULE))) return true;
  }
  return false;
}

/** The claims found B (c1) distinguishably more energy-hungry than A (c0). */
function detected(results) {
  const c = results.claims?.comparisons.find((x) => x.objective === 'energy' && new Set([x.reference, x.other]).has('c0') && new Set([x.reference, x.other]).has('c1'));
  return !!c && c.distinguishable && (c.reference === 'c0' ? c.ratio > 1 : c.ratio < 1);
}

const rows = [];
for (const [name, scenario] of Object.entries(SCENARIOS)) {
  for (const { order, blocked, label } of DESIGNS) {
    let point = 0;
    let claims = 0;
    let confounded = 0;
    for (let i = 0; i < opts.campaigns; i++) {
      const results = campaignResults(simulate(scenario, order), { confidence: CONFIDENCE, blocked });
      if (pointDifference(results)) point++;
      if (name.startsWith('ab') ? detected(results) : results.claims?.distinguishable) claims++;
      if ((results.nodes?.confounded.length ?? 0) > 0) confounded++;
    }
    rows.push({
      scenario: name, order, paired: blocked, design: label, point: point / opts.campaigns, claims: claims / opts.campaigns,
      ...(scenario.nodes > 1 ? { confounded: confounded / opts.campaigns } : {}),
    });
  }
}

const pct = (x) => `${(100 * x).toFixed(1)} %`;
log(`experiment design: ${opts.campaigns} simulated campaigns per row, ${REPETITIONS} repetitions, CV ${pct(CV)}, drift +${pct(DRIFT)} from a random run, node effect +${pct(NODE_EFFECT)} energy, claims at ${pct(CONFIDENCE)} (Holm)`);
log('scenario    design                point (>5 % apart)  claims (distinguishable)  confounded named');
for (const r of rows) {
  const what = r.scenario.startsWith('ab') ? 'detects' : 'false';
  log(`${r.scenario.padEnd(11)} ${r.design.padEnd(21)} ${pct(r.point).padStart(8)} ${what.padEnd(8)}  ${pct(r.claims).padStart(8)} ${what.padEnd(14)}  ${r.confounded === undefined ? '' : pct(r.confounded)}`);
}
if (opts.json) console.log(JSON.stringify({ campaigns: opts.campaigns, repetitions: REPETITIONS, cv: CV, drift: DRIFT, nodeEffect: NODE_EFFECT, abEnergy: AB_ENERGY, confidence: CONFIDENCE, rows }));
