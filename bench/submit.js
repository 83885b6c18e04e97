#!/usr/bin/env node
// Benchmark: a 1,000-run campaign from POST to every run queued on the local Slurm cluster, and
// the slurmctld RPCs one tracking poll of those 1,000 runs costs. For comparison, in the same
// run: a plain loop of sbatch calls on the cluster itself, erg's own submit loop (paths on stdin)
// over one channel without and with the fence check, and one new SSH connection per sbatch.
//
//   node bench/submit.js                     # --help: the options
//   node bench/submit.js --runs 10000        (issue 14's target: ≥ 1,000 runs/s from POST to all queued)
//
// Needs the build (npx turbo run build), Postgres, Redis and deploy/local-slurm/up.sh.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { parseOptions } = require('./lib/options');

const { opts } = parseOptions({
  script: __filename,
  summary: 'a 1,000-run campaign from POST to every run queued on the local Slurm cluster, and the slurmctld RPCs one tracking '
    + 'poll of those runs costs; for comparison, in the same run, a plain loop of sbatch calls on the cluster itself, erg\'s '
    + 'own submit loop over one channel without and with the fence check, and one new SSH connection per sbatch. Needs the '
    + 'build (npx turbo run build), Postgres, Redis and deploy/local-slurm/up.sh.',
  options: {
    runs: { type: 'integer', min: 1, default: 1000, description: 'runs of the campaign' },
    loop: { type: 'integer', min: 1, default: 200, description: 'held jobs of the plain sbatch loop and of erg\'s submit loop' },
    fresh: { type: 'integer', min: 1, default: 50, description: 'sbatch calls with a new SSH connection each' },
    arrays: { type: 'string', choices: ['on', 'off'], default: 'on', description: 'on: runs that share resources go as array jobs (erg\'s default); off: one sbatch per run, as before issue 14' },
  },
  examples: ['node bench/submit.js --runs 1000 --loop 200 --fresh 50', 'node bench/submit.js --runs 10000 --loop 200 --fresh 20 --arrays off'],
});
const pino = require('pino');
const { findClusterByName, listCampaignRuns, runCountsByCampaign } = require('@erg/db');
const { startBenchApi } = require('./lib/bench-api');
const { ClusterConnection, SlurmClient, submitManyCommand, parseSubmitMany, raiseFenceCommand, parseRaiseFence } = require('@erg/slurm');
const { startScheduler, runCycle, createSchedulerContext, SchedulerConfig } = require('@erg/scheduler');
const { secretBoxFrom } = require('@erg/secrets');

const RUNS = opts.runs;
const root = path.resolve(__dirname, '..');
// The local cluster ERG_E2E_SLURM names (22.05 by default; deploy/local-slurm).
const local = require('@erg/testkit').loadLocalCluster();
const connectOptions = {
  host: local.host, port: local.port, username: local.user, privateKey: fs.readFileSync(local.privateKeyPath, 'utf8'),
  hostKeySha256: local.hostKeySha256,
  // The local cluster is on loopback, which a connection reaches only where allowed.
  allowHosts: [local.host],
};
const stamp = Date.now().toString(36);

/** Sum of slurmctld's RPC counters by message type, from sdiag. */
async function sdiag(conn) {
  const { stdout } = await conn.exec('sdiag');
  const section = stdout.split('Remote Procedure Call statistics by message type')[1]?.split('Remote Procedure Call statistics by user')[0] ?? '';
  const counts = {};
  for (const m of section.matchAll(/^\s*(\S+)\s+\(\s*\d+\)\s+count:(\d+)/gm)) counts[m[1]] = Number(m[2]);
  return counts;
}

function diff(after, before) {
  const out = {};
  for (const [k, v] of Object.entries(after)) if (v - (before[k] ?? 0) > 0) out[k] = v - (before[k] ?? 0);
  delete out.REQUEST_STATS_INFO; // sdiag's own calls
  return out;
}

/**
 * Waits until slurmctld has a second without RPCs: sdiag counts everyone's calls, and jobs that
 * are starting (their agent and workload steps, their nodes' messages) would be counted as the
 * poll's. Gives up after 60 s, and then says so in the result.
 */
async function quietController(conn) {
  const deadline = Date.now() + 60_000;
  let last = await sdiag(conn);
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = await sdiag(conn);
    if (Object.keys(diff(now, last)).length === 0) return true;
    last = now;
  }
  return false;
}

/** What a failed run must undo on the cluster: its campaign's jobs (1,000 of `sleep 240` would hold the node for hours). */
let onFailure = null;

async function main() {
  const bench = await startBenchApi('submit');
  const { url, db, redis, prefix, call } = bench;
  const workDir = `${local.workDir}/bench-${stamp}`;
  await call('PUT', '/v1/clusters/local', {
    host: local.host, port: local.port, user: local.user, privateKey: connectOptions.privateKey,
    hostKeySha256: local.hostKeySha256, defaultPartition: local.partition, workDir,
  });
  const cluster = await findClusterByName(db, 'local');
  /** The campaign's runs by state. */
  const countsOf = async (id) => (await runCountsByCampaign(db, [id])).get(id)?.byState ?? {};

  const schedConfig = SchedulerConfig.parse({
    DATABASE_URL: url, ERG_QUEUE_PREFIX: prefix, ERG_POLL_INTERVAL_MS: '1000', LOG_LEVEL: 'warn', ERG_SUBMIT_ARRAYS: opts.arrays,
  });
  const ctx = createSchedulerContext({ config: schedConfig, db, redis, secrets: secretBoxFrom(schedConfig), log: pino({ level: 'warn' }) });
  const scheduler = await startScheduler(ctx);
  const conn = new ClusterConnection({ ...connectOptions, maxSessions: 2 });
  const slurm = new SlurmClient(conn);

  // --- 1. POST → every run queued ---------------------------------------------------------
  const t0 = performance.now();
  // Two axes (at most 100 × RUNS/100 values) rather than one of RUNS values.
  const axisA = Math.min(RUNS, 100);
  const campaign = await call('POST', '/v1/campaigns', {
    name: `bench-${RUNS}`, cluster: 'local',
    parameters: { a: Array.from({ length: axisA }, (_, k) => k + 1), b: Array.from({ length: Math.ceil(RUNS / axisA) }, (_, k) => k + 1) },
    ...(RUNS % axisA === 0 ? {} : { exclude: Array.from({ length: axisA - (RUNS % axisA) }, (_, k) => ({ a: axisA - k, b: Math.ceil(RUNS / axisA) })) }),
    // As many at once as the node takes, like the plain sbatch loop it is compared with.
    resources: { time: '00:05:00', cpusPerTask: 1, exclusive: false },
    run: 'sleep 240',
  });
  /** One scancel per array job (its tasks all go), one per job of its own; how many Slurm jobs that was (one per sbatch). */
  const cancelCampaignJobs = async () => {
    const jobIds = new Set((await listCampaignRuns(db, campaign.id)).items.map((r) => r.slurmJobId?.split('_')[0]).filter((id) => id));
    if (jobIds.size > 0) await slurm.scancel([...jobIds]);
    return jobIds.size;
  };
  onFailure = async () => {
    // The scheduler first, so that no run is handed to Slurm after the list is read.
    await scheduler.close().catch(() => {});
    await cancelCampaignJobs();
  };
  const tPost = performance.now();
  let queuedAt = null;
  for (;;) {
    const counts = await countsOf(campaign.id);
    const n = Object.entries(counts).filter(([state]) => state !== 'pending' && state !== 'submitting').reduce((sum, [, k]) => sum + k, 0);
    if (n >= RUNS) { queuedAt = performance.now(); break; }
    if (performance.now() - t0 > 300_000) throw new Error(`only ${n} of ${RUNS} runs queued after 300 s`);
    await new Promise((r) => setTimeout(r, 25));
  }
  const seconds = (queuedAt - t0) / 1000;
  const failed = (await countsOf(campaign.id)).failed ?? 0;
  await scheduler.close();

  // --- 2. slurmctld RPCs for one poll of 1,000 tracked runs ---------------------------------
  const { queued = 0, running = 0 } = await countsOf(campaign.id);
  const tracked = queued + running;
  // sdiag counts every caller's RPCs, so a job step or node message landing inside the window
  // adds to the poll's count (seen in CI under load). A poll cannot cost fewer RPCs than it
  // makes, so the fewest over three quiet-started tries is its cost; every try is reported.
  const tries = [];
  for (let k = 0; k < 3; k++) {
    const quiet = await quietController(conn);
    const before = await sdiag(conn);
    await runCycle(ctx, cluster.id);
    const after = await sdiag(conn);
    const byType = diff(after, before);
    tries.push({ quiet, byType, total: Object.values(byType).reduce((a, b) => a + b, 0) });
  }
  const fewest = tries.reduce((a, b) => (b.total < a.total ? b : a));
  const rpcs = fewest.byType;
  const rpcTotal = fewest.total;
  const quiet = fewest.quiet;

  const sbatchCalls = await cancelCampaignJobs();
  onFailure = null;

  // --- 3. plain sbatch loop on the cluster itself ------------------------------------------
  const LOOP = opts.loop;
  const loopName = `ergbench-loop-${stamp}`;
  const loop = await conn.exec(
    `s=$(date +%s%N); for i in $(seq ${LOOP}); do sbatch --parsable --hold --job-name=${loopName} --wrap true >/dev/null || exit 1; done; e=$(date +%s%N); echo $(( (e - s) / 1000000 ))`,
    { timeoutMs: 300_000 },
  );
  const loopMs = Number(loop.stdout.trim());
  await conn.exec(`scancel --name=${loopName}`);

  // --- 3b. erg's own submit loop over the same number of held jobs, without and with the fence:
  // what the per-sbatch fence check (flock + read of the fence file) costs.
  const scripts = `${workDir}/loop-scripts`;
  await conn.exec(`mkdir -p '${scripts}' && for i in $(seq ${LOOP}); do printf '#!/bin/sh\n#SBATCH --hold\n#SBATCH --job-name=${loopName}\n#SBATCH --output=/dev/null\ntrue\n' > '${scripts}'/$i.sh; done`);
  const paths = Array.from({ length: LOOP }, (_, i) => `${scripts}/${i + 1}.sh`);
  const fence = { path: `${workDir}/.erg/fence-bench`, epoch: 1n };
  const raised = parseRaiseFence((await conn.exec(raiseFenceCommand(fence, 20))).stdout);
  if (!raised.raised) throw new Error(`could not raise the bench's fence: ${JSON.stringify(raised)}`);
  const ergLoopMs = {};
  for (const [label, f] of [['unfenced', null], ['fenced', fence]]) {
    const { command, stdin } = submitManyCommand(paths, f);
    const t = performance.now();
    const r = await conn.exec(command, { stdin, timeoutMs: 300_000 });
    ergLoopMs[label] = performance.now() - t;
    const results = parseSubmitMany(r.stdout, paths);
    if (results.some((x) => x.status !== 'ok')) throw new Error(`erg's ${label} loop: ${JSON.stringify(results.find((x) => x.status !== 'ok'))}`);
    await conn.exec(`scancel --name=${loopName}`);
  }

  // --- 4. one new SSH connection per sbatch ------------------------------------------------
  const FRESH = opts.fresh;
  const freshName = `ergbench-fresh-${stamp}`;
  const tf = performance.now();
  for (let k = 0; k < FRESH; k++) {
    const c = new ClusterConnection({ ...connectOptions, maxSessions: 1 });
    const r = await c.exec(`sbatch --parsable --hold --job-name=${freshName} --wrap true`);
    if (r.code !== 0) throw new Error(r.stderr);
    await c.close();
  }
  const freshMs = performance.now() - tf;
  await conn.exec(`scancel --name=${freshName}`);

  const result = {
    runs: RUNS,
    arrays: opts.arrays,
    sbatchCalls,
    postMs: Math.round(tPost - t0),
    allQueuedS: Number(seconds.toFixed(2)),
    runsPerS: Math.round(RUNS / seconds),
    failedAtSubmission: failed,
    trackedRunsAtPoll: tracked,
    slurmctldRpcsPerPoll: rpcTotal,
    controllerQuietBeforePoll: quiet,
    rpcsByType: rpcs,
    rpcTries: tries.map((t) => t.byType),
    plainSbatchLoopOnCluster: { jobs: LOOP, seconds: loopMs / 1000, jobsPerS: Math.round(LOOP / (loopMs / 1000)) },
    ergLoopOneChannel: Object.fromEntries(Object.entries(ergLoopMs).map(([k, ms]) => [k, { jobs: LOOP, seconds: Number((ms / 1000).toFixed(2)), jobsPerS: Math.round(LOOP / (ms / 1000)) }])),
    newSshConnectionPerSbatch: { jobs: FRESH, seconds: Number((freshMs / 1000).toFixed(2)), jobsPerS: Number((FRESH / (freshMs / 1000)).toFixed(1)) },
  };
  console.log(JSON.stringify(result, null, 2));
  console.log(`\n${RUNS} runs POST → all queued: ${seconds.toFixed(2)} s (${result.runsPerS} runs/s); ` +
    `plain sbatch loop on the cluster: ${result.plainSbatchLoopOnCluster.jobsPerS} jobs/s; ` +
    `erg's loop over one channel: ${result.ergLoopOneChannel.unfenced.jobsPerS} jobs/s unfenced, ${result.ergLoopOneChannel.fenced.jobsPerS} fenced; ` +
    `new SSH connection per sbatch: ${result.newSshConnectionPerSbatch.jobsPerS} jobs/s; ` +
    `slurmctld RPCs for one poll of ${tracked} tracked runs: ${rpcTotal}`);

  await conn.exec(`rm -rf '${workDir}'`);
  await conn.close();
  await ctx.close();
  await bench.close();
}

main().catch(async (err) => {
  console.error(err);
  if (onFailure) await onFailure().catch((e) => console.error(`could not cancel the campaign's jobs: ${e.message}`));
  process.exit(1);
});
