#!/usr/bin/env node
// Benchmark: POST /v1/campaigns/{id}/cancel on a 10,000-run campaign. The campaign's runs are
// created through the API; before the cancel, some are moved on with the scheduler's own
// transitions (claimed, queued with a Slurm job id, a fifth of those running), as a campaign in
// flight would be. No scheduler runs: what is timed is the API's answer, not the scancel that
// follows it. Each round times, on a fresh campaign:
//   - the answer with the default ERG_CANCEL_INLINE_RUNS (the pending runs are cancelled after it),
//     and how long until every pending run is cancelled;
//   - for comparison, the answer when every pending run is cancelled before it (what cancel did
//     before: ERG_CANCEL_INLINE_RUNS above the campaign's size).
// Prints medians and worsts over --repeat rounds, their ratio, and the `cancelling` counts.
//
//   npx turbo run build && node bench/cancel.js        # --help: the options
'use strict';
const { generateKeyPairSync } = require('node:crypto');
const { parseOptions } = require('./lib/options');

const { opts } = parseOptions({
  script: __filename,
  summary: 'POST /v1/campaigns/{id}/cancel on a 10,000-run campaign, some of its runs claimed, queued and running (the '
    + 'scheduler\'s own transitions, no scheduler): the answer with the default ERG_CANCEL_INLINE_RUNS and until every pending '
    + 'run is cancelled, against the answer when every pending run is cancelled first; medians and worsts over the rounds. '
    + 'Needs the build (npx turbo run build), Postgres and Redis.',
  options: {
    runs: { type: 'integer', min: 1, default: 10_000, quick: 200, description: 'runs per campaign (100 × runs/100 configurations, rounded up)' },
    active: { type: 'integer', min: 0, default: 2000, quick: 50, description: 'runs handed to "Slurm" before the cancel (a fifth of them running)' },
    repeat: { type: 'integer', min: 1, default: 3, quick: 1, description: 'rounds, each on a fresh campaign' },
    quick: { type: 'boolean', description: '200 runs, 50 active, one round (what the test runs)' },
    json: { type: 'boolean', description: 'one JSON line instead of the text (for the test)' },
  },
  examples: ['node bench/cancel.js --runs 10000 --active 2000 --repeat 3', 'node bench/cancel.js --quick --json'],
});
const { claimRunsForSubmission, findClusterByName, markRunsQueued, recordSlurmProgress, runCountsByCampaign } = require('@erg/db');
const { analyzeTables } = require('@erg/db/testing');
const { median, startBenchApi } = require('./lib/bench-api');

const RUNS = opts.runs;
const ACTIVE = opts.active;
const REPEAT = opts.repeat;
const PRIVATE_KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'sec1', format: 'pem' }).toString();

/** An API with a registered cluster; `inline`: ERG_CANCEL_INLINE_RUNS. */
async function startApi(name, inline) {
  const bench = await startBenchApi(name, inline === undefined ? {} : { env: { ERG_CANCEL_INLINE_RUNS: String(inline) } });
  await bench.call('POST', '/v1/clusters', {
    name: 'bench', host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY, hostKeySha256: 'SHA256:' + 'A'.repeat(43),
    workDir: '/var/lib/erg-bench',
  });
  const cluster = await findClusterByName(bench.db, 'bench');
  return { bench, clusterId: cluster.id };
}

/** A campaign of RUNS runs with ACTIVE of them handed to "Slurm" (a fifth of those running). */
async function seedCampaign({ bench, clusterId }, i) {
  const campaign = await bench.call('POST', '/v1/campaigns', {
    name: `cancel-${i}`, cluster: 'bench', run: 'echo {{n}} {{m}}',
    // An axis has at most 1,000 values: RUNS = 100 × RUNS/100 configurations.
    parameters: { n: Array.from({ length: 100 }, (_, k) => k + 1), m: Array.from({ length: Math.ceil(RUNS / 100) }, (_, k) => k + 1) },
  });
  const claimed = await claimRunsForSubmission(bench.db, clusterId, ACTIVE);
  await markRunsQueued(bench.db, claimed.map((r, k) => ({ runId: r.id, slurmJobId: String(1_000_000 * (i + 1) + k) })));
  const running = claimed.slice(0, Math.floor(ACTIVE / 5));
  await recordSlurmProgress(bench.db, running.map((r) => ({ runId: r.id, state: 'running', slurmState: 'RUNNING', reason: null, startedAt: new Date(), nodeList: 'node01' })));
  await analyzeTables(bench.db);
  return campaign.id;
}

async function pendingLeft(db, id) {
  const counts = (await runCountsByCampaign(db, [id])).get(id)?.byState ?? {};
  return counts.pending ?? 0;
}

/** Times the cancel answers of REPEAT fresh campaigns; with `untilDone`, also until no pending run is left. */
async function rounds(api, untilDone) {
  const answers = [];
  const done = [];
  let last = null;
  for (let i = 0; i < REPEAT; i++) {
    const id = await seedCampaign(api, i);
    const t0 = performance.now();
    last = await api.bench.call('POST', `/v1/campaigns/${id}/cancel`);
    answers.push(performance.now() - t0);
    if (untilDone) {
      while ((await pendingLeft(api.bench.db, id)) > 0) await new Promise((r) => setTimeout(r, 5));
      done.push(performance.now() - t0);
    }
  }
  return { answers, done, last };
}

const stats = (xs) => ({ medianMs: Math.round(median(xs)), worstMs: Math.round(Math.max(...xs)) });

async function main() {
  const current = await startApi('cancel');
  let now;
  try {
    now = await rounds(current, true);
  } finally {
    await current.bench.close();
  }
  const old = await startApi('cancelinline', Number.MAX_SAFE_INTEGER);
  let inline;
  try {
    inline = await rounds(old, false);
  } finally {
    await old.bench.close();
  }
  const result = {
    runs: RUNS, active: ACTIVE, repeat: REPEAT,
    answer: stats(now.answers), allPendingCancelled: stats(now.done), inlineAnswer: stats(inline.answers),
    ratio: Number((median(inline.answers) / median(now.answers)).toFixed(1)),
    cancelling: now.last.cancelling, state: now.last.state, runCounts: now.last.runCounts, inlineCancelling: inline.last.cancelling,
  };
  if (opts.json) return void console.log(JSON.stringify(result));
  const line = (what, s) => console.log(`${what.padEnd(62)} median ${String(s.medianMs).padStart(5)} ms, worst ${String(s.worstMs).padStart(5)} ms`);
  console.log(`cancel of a ${RUNS}-run campaign (${ACTIVE} handed to Slurm), ${REPEAT} rounds`);
  line('answer (pending runs cancelled after it)', result.answer);
  line('  until every pending run is cancelled', result.allPendingCancelled);
  line('for comparison: answer with every pending run cancelled first', result.inlineAnswer);
  console.log(`inline / current answer: ${result.ratio}×`);
  console.log(`answer: state ${result.state}, cancelling ${JSON.stringify(result.cancelling)}, runCounts ${JSON.stringify(result.runCounts)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
