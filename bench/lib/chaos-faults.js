// The chaos suite's faults: what each does to the instance (docs/reliability.md § Faults), when
// each happens (a seeded plan), and the record of what happened when it was injected.
'use strict';
const { seededRandom } = require('@erg/testkit');
const { killAtPhase, onNextPhase } = require('./chaos-processes');

/**
 * Every fault kind. `window`: the part of the fault-free campaign's duration in which it is
 * placed — the submission phases only happen while runs are still waiting to be submitted, so
 * their faults come early; `slow`: the phase is caught on the cluster whose sbatch takes 4 s,
 * so that the kill lands while the sbatch loop runs.
 */
const FAULTS = {
  'scheduler-claim': { phase: 'claim', window: [0.02, 0.45], what: 'SIGKILL a scheduler as it logs the claim phase, restart it' },
  'scheduler-staging': { phase: 'staging', window: [0.02, 0.45], what: 'SIGKILL a scheduler as it starts staging files over SFTP, restart it' },
  'scheduler-sbatch': { phase: 'sbatch', slow: true, window: [0.02, 0.3], what: 'SIGKILL a scheduler mid-sbatch (on the 4 s sbatch door), restart it' },
  'scheduler-recording': { phase: 'recording', window: [0.02, 0.45], what: 'SIGKILL a scheduler after sbatch, as it records the job ids, restart it' },
  'scheduler-tracking': { phase: 'tracking', window: [0.05, 0.75], what: 'SIGKILL a scheduler as it reads squeue/sacct, restart it' },
  'scheduler-finalizing': { phase: 'finalizing', window: [0.05, 0.75], what: 'SIGKILL a scheduler as it finalizes ended runs, restart it' },
  'api-kill': { window: [0.05, 0.75], what: 'SIGKILL an API process, restart it after --api-down-s' },
  'redis-wipe': { window: [0.05, 0.75], what: 'SIGKILL Redis and start an empty one on the same port' },
  'postgres-restart': { window: [0.05, 0.75], what: 'restart Postgres (pg_ctlcluster restart -m immediate: a crash and recovery)' },
  'sshd-restart': { window: [0.05, 0.75], what: "stop erg's sshd, kill the instance's SSH sessions, start sshd again after --sshd-down-s" },
  'slurmctld-stop': { window: [0.05, 0.6], what: 'SIGSTOP slurmctld as a scheduler starts a sbatch loop, SIGCONT it --ctld-stop-s later' },
};
const FAULT_KINDS = Object.keys(FAULTS);
const PHASE_KINDS = FAULT_KINDS.filter((k) => FAULTS[k].phase);
const QUICK_OTHER_PHASES = PHASE_KINDS.filter((k) => k !== 'scheduler-sbatch');

/** The faults of quick mode: mid-sbatch, one other scheduler phase (seeded), Redis, Postgres and an API process. */
function quickKinds(seed) {
  const random = seededRandom(seed ^ 0x5eed);
  const other = QUICK_OTHER_PHASES[Math.floor(random() * QUICK_OTHER_PHASES.length)];
  return ['scheduler-sbatch', other, 'redis-wipe', 'api-kill', 'postgres-restart'];
}

/**
 * When each fault happens, in ms after the campaign's submission: uniform in its window of
 * `expectedMs` (the fault-free duration), drawn from `seed`; which API a kill hits too. The
 * suite injects them one after the other in this order (a fault due while another is still being
 * injected waits for it).
 */
function planFaults(kinds, { seed, expectedMs, scale = 1 }) {
  const random = seededRandom(seed);
  return kinds
    .map((kind) => {
      const spec = FAULTS[kind];
      if (!spec) throw new Error(`unknown fault ${kind} (${FAULT_KINDS.join(', ')})`);
      const [lo, hi] = spec.window;
      return { kind, plannedMs: Math.round(expectedMs * scale * (lo + random() * (hi - lo))), pick: random() };
    })
    .sort((a, b) => a.plannedMs - b.plannedMs)
    .map((f, i) => ({ n: i + 1, ...f }));
}

/**
 * Injects one fault and waits until what it broke has been brought back (a killed process
 * restarted, Redis/Postgres/sshd/slurmctld answering again). Returns its record: when it
 * happened (atMs after t0; null when it never found its moment), what it hit, how long it took.
 */
async function injectFault(fault, { instance, options, t0 }) {
  const spec = FAULTS[fault.kind];
  const since = () => Date.now() - t0;
  const record = { n: fault.n, kind: fault.kind, plannedMs: fault.plannedMs, atMs: null, target: null, detail: null, restoredMs: null };
  if (spec.phase) {
    const cluster = spec.slow ? instance.clusters.slow : instance.clusters.main;
    const hit = await killAtPhase(instance.schedulers, { phase: spec.phase, cluster, timeoutMs: options.phaseWaitMs, now: Date.now });
    if (!hit) {
      record.detail = `no scheduler logged phase ${spec.phase} on ${cluster} within ${options.phaseWaitMs / 1000} s`;
      return record;
    }
    record.atMs = hit.at - t0;
    record.target = `${hit.process.name} (pid ${hit.pid})`;
    await hit.process.exited;
    const started = await restart(hit.process);
    record.detail = `killed at phase ${spec.phase} on ${cluster}; ${started}`;
  } else if (fault.kind === 'api-kill') {
    const api = instance.apis[Math.floor(fault.pick * instance.apis.length)];
    record.atMs = since();
    const pid = await api.kill('SIGKILL');
    record.target = `${api.name} (pid ${pid})`;
    await new Promise((resolve) => setTimeout(resolve, options.apiDownMs));
    record.detail = `restarted after ${options.apiDownMs / 1000} s down; ${await restart(api)}`;
  } else if (fault.kind === 'redis-wipe') {
    record.atMs = since();
    record.target = `redis :${instance.redis.port}`;
    await instance.redis.restartEmpty();
    record.detail = 'every key lost (queue, repeatable tick, locks)';
  } else if (fault.kind === 'postgres-restart') {
    record.atMs = since();
    record.target = `postgres :${instance.postgres.port}`;
    await instance.postgres.restart('immediate');
    record.detail = 'immediate restart (crash recovery)';
  } else if (fault.kind === 'sshd-restart') {
    record.atMs = since();
    const clientPids = [...instance.schedulers, ...instance.apis].map((p) => p.pid).filter((p) => p !== null);
    const { master, sessionsKilled } = await instance.cluster.restartSshd({ clientPids, downMs: options.sshdDownMs });
    record.target = `erg sshd (pid ${master})`;
    record.detail = `down ${options.sshdDownMs / 1000} s; ${sessionsKilled} session processes of the instance killed`;
  } else if (fault.kind === 'slurmctld-stop') {
    // The controller hangs while sbatch calls are in flight: the moment a submission cannot tell
    // whether Slurm took its job. When no sbatch starts within a few seconds, it stops anyway.
    let stopped = null;
    const stop = () => (stopped = instance.cluster.stopSlurmctldNow(options.ctldStopMs));
    const hit = await onNextPhase(instance.schedulers, { phase: 'sbatch', cluster: instance.clusters.main, timeoutMs: 10_000, now: Date.now }, stop);
    if (!hit) stop();
    record.atMs = (hit ? hit.at : Date.now()) - t0;
    try {
      await new Promise((resolve) => setTimeout(resolve, options.ctldStopMs));
    } finally {
      stopped.resume();
    }
    record.target = `slurmctld (pid ${stopped.pid})`;
    record.detail = `SIGSTOP ${hit ? `as ${hit.process.name} started a sbatch loop` : '(no sbatch loop started within 10 s)'} for ${options.ctldStopMs / 1000} s, then SIGCONT`;
  }
  record.restoredMs = since();
  return record;
}

/**
 * Starts a killed process again. A start that fails (the process exits while starting) is the
 * supervisor's to retry, as for any unexpected exit; the fault's record says so.
 */
async function restart(proc) {
  try {
    const { pid, startMs } = await proc.start();
    return `new pid ${pid}, ready after ${(startMs / 1000).toFixed(1)} s`;
  } catch (err) {
    return `restart failed (${err.message}); the supervisor retries`;
  }
}

module.exports = { FAULTS, FAULT_KINDS, PHASE_KINDS, quickKinds, planFaults, injectFault };
