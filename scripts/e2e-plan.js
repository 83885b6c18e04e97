#!/usr/bin/env node
// Where each end-to-end test file runs: the one list scripts/test.sh, `npm run test:matrix` and
// scripts/test/e2e-plan.test.ts read (docs/testing.md).
//
// Two local Slurm clusters stand beside each other (deploy/local-slurm: 22.05 on this machine, 24.11
// in a Debian 13 root). The differences between Slurm versions in what erg parses are pinned by
// fixture tests of six versions (packages/slurm/test/versions.test.ts); what those cannot pin is
// what a live Slurm (and the login node's OpenSSH and coreutils) says and does. So:
//   on: 'every' — the file's behaviour depends on what Slurm or the login node says or does
//                 (submission, arrays, squeue/sacct tracking, scancel, site limits, a hung
//                 controller, job files, SSH/jump hosts/certificates): it runs on every cluster.
//   on: '22.05' | '24.11' — everything else runs once, on the cluster named (spread over both so
//                 that the two clusters' runs take about as long as each other).
//   on: 'multinode' — needs several nodes: runs on the multi-node cluster (deploy/local-slurm/up.sh
//                 --multinode, four nodes gh-[001-004] on Slurm 22.05), and only there — 'every'
//                 means every Slurm version, and the multi-node cluster adds none.
//   slot: where in the run it goes, and with whom:
//     'parallel'   — isolates itself (own database clone, queue prefix and work dir: the harness
//                    gives it that) and shares the node: it runs beside the other such files of
//                    its cluster.
//     'whole-node' — its runs take the whole node (exclusive, as the examples it submits ask):
//                    beside each other, after the cluster's parallel files, so that their runs
//                    never wait for a node to drain of other files' long jobs.
//     'serial'     — disrupts its cluster: restarts or stops what the cluster's other users need
//                    (its sshd, slurmctld) or kills processes at chosen moments; one at a time,
//                    after the cluster's whole-node files.
//     'quiet'      — measures the whole machine or controller (the CPU power model reads the
//                    machine's /proc/stat; slurmctld's RPC counters): alone on the machine, last.
//   The clusters share nothing but the machine, so each goes through parallel → whole-node →
//   serial at the same time as the others; the quiet files follow once all are done.
//   minutes: about how long the file takes, relative to the others (docs/testing.md); where several
//                 files run at once the longest start first (scripts/e2e-sequencer.js), so that
//                 none is left running by itself at the end. The one-at-a-time slots run in the
//                 order listed here.
// A file that drives sbatch, squeue, sacct or scancel (itself, through the e2e harness's Slurm
// helpers, or through a bench/ script it runs) must be 'every': scripts/test/e2e-plan.test.ts
// fails when one is not, and when a *.e2e.test.ts is missing here or listed but gone.
//
// Usage: node scripts/e2e-plan.js files SERIES SLOT [--matrix]   one path per line
//        node scripts/e2e-plan.js series                         the clusters, one per line
'use strict';

/** The Slurm versions `on: 'every'` means (and the matrix runs every file on). */
const SLURM_VERSIONS = ['22.05', '24.11'];
/** The local clusters: one per Slurm version, and the multi-node one. */
const SERIES = [...SLURM_VERSIONS, 'multinode'];
const SLOTS = ['parallel', 'whole-node', 'serial', 'quiet'];

/** @type {Record<string, { on: 'every' | '22.05' | '24.11' | 'multinode', slot: 'parallel' | 'whole-node' | 'serial' | 'quiet', minutes: number, why: string }>} */
const E2E_PLAN = {
  // --- Slurm-facing: on every cluster -----------------------------------------------------
  'packages/slurm/test/slurm-client.e2e.test.ts': { on: 'every', slot: 'parallel', minutes: 0.1, why: 'sbatch, squeue, sacct and scancel and their parsers against a live Slurm' },
  'packages/slurm/test/job-files.e2e.test.ts': { on: 'every', slot: 'parallel', minutes: 0.1, why: "job files read on the login node with its own timeout, stat and dd" },
  'packages/slurm/test/ssh.e2e.test.ts': { on: 'every', slot: 'parallel', minutes: 0.3, why: "the SSH transport against the cluster's own sshd (OpenSSH differs between the Debian releases)" },
  'packages/slurm/test/jump-cert.e2e.test.ts': { on: 'every', slot: 'parallel', minutes: 0.3, why: 'jump hosts and OpenSSH user certificates, then squeue through them' },
  'apps/scheduler/test/credentials.e2e.test.ts': { on: 'every', slot: 'parallel', minutes: 0.3, why: 'credentials, bastions and host-key rotation against the login node' },
  'apps/scheduler/test/campaign.e2e.test.ts': { on: 'every', slot: 'parallel', minutes: 0.7, why: "submission, array tasks, squeue/sacct tracking, scancel, sbatch's refusal messages" },
  'apps/scheduler/test/time-limit.e2e.test.ts': { on: 'every', slot: 'parallel', minutes: 1.2, why: "a job killed at its time limit as sacct reports it (TIMEOUT)" },
  'apps/scheduler/test/arrays.e2e.test.ts': { on: 'every', slot: 'parallel', minutes: 0.8, why: 'job arrays: one sbatch, task ids, cancelling one task, a pending task Slurm keeps no record of' },
  'apps/scheduler/test/site-limits.e2e.test.ts': { on: 'every', slot: 'parallel', minutes: 1.2, why: "a QOS's MaxSubmitJobsPerUser and how sbatch refuses beyond it" },
  'apps/scheduler/test/concurrency.e2e.test.ts': { on: 'every', slot: 'parallel', minutes: 0.3, why: 'runs held to a cluster limit, counted from squeue' },
  'apps/scheduler/test/telemetry.e2e.test.ts': { on: 'every', slot: 'parallel', minutes: 0.3, why: "the agent started as an srun --overlap step beside the workload, and the spool pulled after the job" },
  'apps/scheduler/test/job-output.e2e.test.ts': { on: 'every', slot: 'parallel', minutes: 0.5, why: 'the output files slurmstepd writes and a job that replaces them' },
  'apps/scheduler/test/submit-bench.e2e.test.ts': { on: 'every', slot: 'quiet', minutes: 0.2, why: "bench/submit.js: erg against a plain sbatch loop; counts slurmctld's RPCs per poll (one squeue + one sacct), which any other user of the controller would add to" },
  'apps/cli/test/cli.e2e.test.ts': { on: 'every', slot: 'parallel', minutes: 1.5, why: 'erg submit --watch and cancel, checked against squeue and sacct' },
  'apps/scheduler/test/restart.e2e.test.ts': { on: 'every', slot: 'serial', minutes: 0.7, why: 'kills schedulers after staging and after sbatch; the restart finds the jobs by name in squeue/sacct' },
  'apps/scheduler/test/fencing.e2e.test.ts': { on: 'every', slot: 'serial', minutes: 0.4, why: "kills a scheduler inside its remote sbatch loop, timed on the slow sbatch door" },
  'apps/scheduler/test/controller-hang.e2e.test.ts': { on: 'every', slot: 'serial', minutes: 0.7, why: "SIGSTOPs the cluster's slurmctld while sbatch calls are in flight" },
  'apps/scheduler/test/chaos.e2e.test.ts': { on: 'every', slot: 'serial', minutes: 1.6, why: "bench/chaos.js: restarts the cluster's sshd, stops slurmctld and kills erg's processes mid-sbatch" },

  // --- once: erg's own behaviour, whatever Slurm runs the jobs ------------------------------
  'apps/api/test/log-tails-bench.e2e.test.ts': { on: '22.05', slot: 'parallel', minutes: 0.1, why: 'bench/log-tails.js in its quick mode' },
  'apps/scheduler/test/adaptive.e2e.test.ts': { on: '22.05', slot: 'whole-node', minutes: 0.4, why: "an adaptive campaign's decisions (examples/adaptive-cpu.yaml: exclusive runs)" },
  'apps/cli/test/network-movement.e2e.test.ts': { on: '22.05', slot: 'whole-node', minutes: 0.4, why: "network bytes from the agents' net source (real /sys/class/net: the node's loopback, so exclusive runs) per configuration in the results and erg results --data-movement" },
  'apps/scheduler/test/log-phases.e2e.test.ts': { on: '22.05', slot: 'parallel', minutes: 0.1, why: "phases from the workload's log" },
  'apps/scheduler/test/metrics.e2e.test.ts': { on: '22.05', slot: 'parallel', minutes: 0.1, why: "the scheduler's Prometheus metrics" },
  'apps/scheduler/test/power-state.e2e.test.ts': { on: '22.05', slot: 'whole-node', minutes: 0.3, why: "the site's node helper for power knobs (exclusive runs: power settings are the node's)" },
  'apps/scheduler/test/cooldown.e2e.test.ts': { on: '22.05', slot: 'parallel', minutes: 0.4, why: "the cooldown's wait before the idle baseline, recorded with the run and outside its time" },
  'apps/scheduler/test/staged-runtime.e2e.test.ts': { on: '22.05', slot: 'parallel', minutes: 0.4, why: "erg's staged Node.js and koffi where agentCommand is missing on the nodes (24.11's root has no Node.js: its files all run their agents so)" },
  'apps/scheduler/test/redis-loss.e2e.test.ts': { on: '22.05', slot: 'parallel', minutes: 0.2, why: 'its own Redis wiped under a running scheduler' },
  'apps/scheduler/test/phases.e2e.test.ts': { on: '22.05', slot: 'quiet', minutes: 0.7, why: "compares phases' power from the CPU model, which reads the whole machine's /proc/stat: needs a quiet machine" },
  'apps/api/test/logs.e2e.test.ts': { on: '24.11', slot: 'parallel', minutes: 1.4, why: "the API's log tails of a run" },
  'apps/web/test/web.e2e.test.ts': { on: '24.11', slot: 'whole-node', minutes: 0.8, why: 'the web app in Chromium (its adaptive campaign is examples/adaptive-cpu.yaml: exclusive runs)' },
  'apps/cli/test/regress.e2e.test.ts': { on: '24.11', slot: 'parallel', minutes: 1.2, why: "erg regress's verdicts and reports" },
  'apps/scheduler/test/suites.e2e.test.ts': { on: '22.05', slot: 'parallel', minutes: 0.5, why: 'suites: cron triggers, verdicts, webhooks' },
  'apps/scheduler/test/sequential-suite.e2e.test.ts': { on: '22.05', slot: 'parallel', minutes: 0.3, why: 'sequential suite runs' },
  'apps/scheduler/test/search.e2e.test.ts': { on: '24.11', slot: 'whole-node', minutes: 0.4, why: 'a search campaign (examples/search-cpu.yaml: exclusive runs)' },
  'apps/scheduler/test/experiment-design.e2e.test.ts': { on: '22.05', slot: 'parallel', minutes: 0.8, why: 'an A/A campaign with drift injected halfway: runs in the seed\'s blocks, twins not distinguishable' },
  // --- on the multi-node cluster --------------------------------------------------------------
  'apps/cli/test/study.e2e.test.ts': { on: 'multinode', slot: 'whole-node', minutes: 0.6, why: "the study (examples/multimodal-cpu.yaml at its smallest size): training across 2 nodes (exclusive runs), phases, byte metrics and network bytes per configuration, erg submit --watch ending with the answer" },
  'apps/scheduler/test/multinode.e2e.test.ts': { on: 'multinode', slot: 'parallel', minutes: 1.5, why: "multi-node runs: energy summed over nodes and broken down per node, a node's agent failing or dying named, a 1/2/4-node sweep (examples/multinode-cpu.yaml)" },
  'apps/scheduler/test/secrets.e2e.test.ts': { on: '24.11', slot: 'parallel', minutes: 0.2, why: 'secrets kept out of logs, scripts and responses' },
};

/** Whether a file planned `on` runs on cluster `series`; `matrix`: every single-node file on every Slurm version. */
function runsOn(on, series, matrix) {
  if (series === 'multinode' || on === 'multinode') return on === series;
  return matrix || on === 'every' || on === series;
}

/** The files of one cluster and slot; `matrix`: every file on every Slurm version (releases), the multi-node files on their cluster. */
function planFiles(series, slot, { matrix = false } = {}) {
  if (!SERIES.includes(series)) throw new Error(`unknown cluster ${series} (${SERIES.join(', ')})`);
  if (!SLOTS.includes(slot)) throw new Error(`unknown slot ${slot} (${SLOTS.join(', ')})`);
  return Object.entries(E2E_PLAN)
    .filter(([, p]) => p.slot === slot && runsOn(p.on, series, matrix))
    .map(([file]) => file)
    .sort();
}

/** The plan's estimate for a file (minutes alone), 0 for one it does not know. */
function plannedMinutes(file) {
  return E2E_PLAN[file]?.minutes ?? 0;
}

module.exports = { E2E_PLAN, SERIES, SLOTS, SLURM_VERSIONS, planFiles, plannedMinutes };

if (require.main === module) {
  const [verb, series, slot, ...rest] = process.argv.slice(2);
  try {
    if (verb === 'series') console.log(SERIES.join('\n'));
    else if (verb === 'files' && rest.every((a) => a === '--matrix')) {
      const files = planFiles(series, slot, { matrix: rest.includes('--matrix') });
      if (files.length > 0) console.log(files.join('\n'));
    } else throw new Error('usage: node scripts/e2e-plan.js files SERIES SLOT [--matrix] | series');
  } catch (err) {
    console.error(`scripts/e2e-plan.js: ${err.message}`);
    process.exit(2);
  }
}
