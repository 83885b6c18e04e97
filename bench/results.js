#!/usr/bin/env node
// Benchmark: how soon a campaign's results reflect a run's last batch, for a campaign of
// thousands of runs. An import campaign of 100 configurations × 30 repetitions = 3,000 runs is
// filled with telemetry and finished; then, for the last run, the clock runs from posting its
// last batch, through POST /finish (202 at once) and the scheduler computing the run's energy
// (in its worker thread; GET /v1/runs/:id/energy polled until it answers), to a complete
// GET /v1/campaigns/:id/results. The scheduler runs in this process beside the API.
//
//   node bench/results.js        # --help: the options
'use strict';
const { parseOptions } = require('./lib/options');

const { opts } = parseOptions({
  script: __filename,
  summary: 'how soon a campaign\'s results reflect a run\'s last batch, for a campaign of thousands of runs: an import campaign '
    + 'of 100 configurations × 30 repetitions is filled with telemetry and finished; for the last run the clock runs from '
    + 'posting its last batch, through POST /finish and the scheduler computing its energy, to a complete GET /v1/campaigns/:id/results. '
    + 'Needs the build (npx turbo run build), Postgres and Redis.',
  options: {
    configs: { type: 'integer', min: 1, default: 100, quick: 10, description: 'configurations of the campaign' },
    reps: { type: 'integer', min: 1, default: 30, quick: 3, description: 'repetitions per configuration' },
    quick: { type: 'boolean', description: '10 configurations × 3 repetitions (a test runs it)' },
    json: { type: 'boolean', description: 'one line of JSON at the end, with what the results hold for the last run\'s configuration (the text goes to stderr)' },
  },
  examples: ['node bench/results.js --configs 100 --reps 30', 'node bench/results.js --quick --json'],
});
const { startBenchApi } = require('./lib/bench-api');
const { startBenchScheduler } = require('./lib/bench-scheduler');
const { listStaleEnergyRuns } = require('@erg/db');

const log = opts.json ? console.error : console.log;

async function main() {
  const bench = await startBenchApi('results', { poolSize: 8 });
  const scheduler = await startBenchScheduler(bench);
  const { call } = bench;
  /** Until the scheduler has computed every finished run's energy. */
  async function energySettled() {
    while ((await listStaleEnergyRuns(bench.db, 1)).length > 0) await new Promise((r) => setTimeout(r, 20));
  }
  /** Until the run's energy is there (the scheduler computes it after its finish). */
  async function energyOf(runId) {
    for (;;) {
      const res = await fetch(`${bench.api}/v1/runs/${runId}/energy`, { headers: { authorization: `Bearer ${bench.token}` } });
      if (res.status === 200) return res.json();
      await res.arrayBuffer();
      if (res.status !== 409) throw new Error(`GET /v1/runs/${runId}/energy: ${res.status}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  const configs = opts.configs;
  const reps = opts.reps;
  const campaign = await call('POST', '/v1/campaigns', {
    name: 'results-bench', execution: 'import', repetitions: reps,
    parameters: { a: Array.from({ length: configs }, (_, i) => i + 1) },
    metrics: [{ name: 'steps', regex: 'steps=([0-9]+)', work: true }],
  });
  const base = Date.now() - 3_600_000;
  /** The i-th run's figures: its parameter, start, duration in seconds and constant power (300 - a W). */
  function plan(run, i) {
    const a = Number(run.configurationKey.split('=')[1]);
    return { a, start: base + i * 1000, seconds: 5 + a * 0.01 + (i % reps) * 0.001 };
  }
  async function measure(run, i) {
    const { a, start, seconds } = plan(run, i);
    const t = Array.from({ length: 71 }, (_, k) => start - 1000 + k * 100);
    await call('POST', `/v1/runs/${run.id}/telemetry`, { node: 'n1', seq: 0, samples: [{ sensor: 'cpu0.power', t, v: t.map(() => 300 - a) }] });
    await call('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + seconds * 1000).toISOString(), metrics: { steps: 100 } });
  }
  const runs = campaign.runs;
  const fillStart = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < runs.length - 1) {
      const i = next++;
      await measure(runs[i], i);
    }
  }));
  await energySettled();
  const fillS = (performance.now() - fillStart) / 1000;

  const last = runs.length - 1;
  const t0 = performance.now();
  await measure(runs[last], last);
  const tFinished = performance.now();
  await energyOf(runs[last].id);
  const tEnergy = performance.now();
  const results = await call('GET', `/v1/campaigns/${campaign.id}/results`);
  const t1 = performance.now();
  const lastConfig = results.configurations.find((c) => c.key === runs[last].configurationKey);
  if (lastConfig.n !== reps) throw new Error(`the last run is missing from the results (n = ${lastConfig.n})`);
  const again = performance.now();
  await call('GET', `/v1/campaigns/${campaign.id}/results`);
  const resultsOnlyMs = performance.now() - again;

  const out = {
    runs: runs.length, configurations: configs,
    fillSeconds: Number(fillS.toFixed(1)),
    lastBatchToResultsMs: Math.round(t1 - t0),
    finishMs: Math.round(tFinished - t0),
    energyMs: Math.round(tEnergy - tFinished),
    resultsRequestMs: Math.round(resultsOnlyMs),
    paretoFront: results.paretoFront.length,
  };
  log(JSON.stringify(out, null, 2));
  log(`\n${runs.length} runs: last batch → its energy → campaign results in ${out.lastBatchToResultsMs} ms ` +
    `(batch and finish ${out.finishMs} ms, the scheduler's energy ${out.energyMs} ms; GET results alone: ${out.resultsRequestMs} ms)`);
  if (opts.json) {
    const summary = ({ n, mean, min, max }) => ({ n, mean, min, max });
    const lastPlan = plan(runs[last], last);
    console.log(JSON.stringify({
      ...out, repetitions: reps, fillSecondsExact: fillS,
      resultsConfigurations: results.configurations.length,
      resultsRuns: results.configurations.reduce((n, c) => n + c.n, 0),
      lastRun: { configurationKey: runs[last].configurationKey, seconds: lastPlan.seconds, powerW: 300 - lastPlan.a },
      lastConfiguration: {
        key: lastConfig.key, n: lastConfig.n, timeS: summary(lastConfig.timeS), energyJ: summary(lastConfig.energyJ),
        avgPowerW: summary(lastConfig.avgPowerW), steps: summary(lastConfig.metrics.steps),
      },
    }));
  }
  await scheduler.close();
  await bench.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
