// The chaos suite's hands on the local Slurm cluster (deploy/local-slurm): restarting erg's sshd,
// stopping slurmctld for a while, and what Slurm holds for a campaign. The cluster is shared with
// every other test on the machine, so each fault that stops a daemon first starts a detached
// watchdog that brings the daemon back even if this process dies, and `restoreAll` (called from
// the suite's exit handlers) undoes whatever is still undone.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { execFile, spawn } = require('node:child_process');
const { promisify } = require('node:util');
const { arraySubmissionFromJobName, ClusterConnection, SlurmClient, slurmJobKey } = require('@erg/slurm');

/**
 * Which of `runs` (rows with id, array_submission, array_index) a Slurm job belongs to: a job
 * named `erg-<runId>`, or task i of an array named `erg-a-<submission>` the run was staged into.
 */
function ownerOf(runs) {
  const ids = new Set(runs.map((r) => r.id));
  const byTask = new Map(runs.filter((r) => r.array_submission).map((r) => [`${r.array_submission}#${r.array_index}`, r.id]));
  return (job) => {
    const submission = arraySubmissionFromJobName(job.name);
    if (submission !== null) return byTask.get(`${submission}#${job.arrayTaskId}`) ?? null;
    return job.runId && ids.has(job.runId) ? job.runId : null;
  };
}
const { waitFor } = require('@erg/testkit');

const run = promisify(execFile);
const root = path.resolve(__dirname, '..', '..');
const UP_SH = path.join(root, 'deploy', 'local-slurm', 'up.sh');

/** The pid in `file` when it names a live process called `comm`, else null (lib.sh's pid_from_file). */
function pidFromFile(file, comm) {
  let pid;
  try {
    pid = Number(fs.readFileSync(file, 'utf8').trim());
    if (!Number.isInteger(pid) || pid <= 0) return null;
    if (fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== comm) return null;
    const state = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
    return state === 'Z' ? null : pid;
  } catch {
    return null;
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A detached `bash -c script` in its own process group: it outlives this process (SIGKILL
 * included), so a daemon stopped by a fault comes back whatever happens to the suite. `cancel`
 * kills that process group only.
 */
function watchdog(script) {
  const child = spawn('bash', ['-c', script], { detached: true, stdio: 'ignore' });
  child.unref();
  return {
    cancel() {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already done
      }
    },
  };
}

class LocalClusterOps {
  /** @param {import('@erg/testkit').LocalCluster} local */
  constructor(local) {
    this.local = local;
    // Where up.sh keeps erg's sshd and slurmctld pid files (host paths) and how it starts that
    // sshd, from cluster.json: the same code serves the 22.05 cluster and the chrooted 24.11 one.
    this.sshdPidFile = local.sshdPidFile;
    this.sshdStartCommand = local.sshdStartCommand;
    this.slurmctldPidFile = local.slurmctldPidFile;
    /** up.sh with this cluster's selector (`--slurm 24.11`), as argv and as a shell line for watchdogs. */
    this.upArgv = [UP_SH, ...local.upArgs];
    this.upLine = this.upArgv.map((a) => `'${a}'`).join(' ');
    this.connection = new ClusterConnection({
      host: local.host, port: local.port, username: local.user, privateKey: local.privateKey,
      hostKeySha256: local.hostKeySha256, maxSessions: 2, allowHosts: [local.host],
    });
    this.slurm = new SlurmClient(this.connection);
    /** slurmctld's pid while this suite holds it stopped. */
    this.stoppedCtld = null;
    this.sshdDown = false;
    this.watchdogs = new Set();
  }

  /**
   * sshd's session processes serving `clientPids`' TCP connections to the cluster's ports (both
   * doors): found with `ss` by matching the clients' local ports with the sessions' peer ports.
   * Other users of the shared sshd keep their sessions.
   */
  async sessionsOf(clientPids) {
    const ports = [this.local.port, this.local.slowSbatchPort];
    const filter = ports.map((p) => `sport = :${p} or dport = :${p}`).join(' or ');
    const { stdout } = await run('ss', ['-tnpH', 'state', 'established', `( ${filter} )`]);
    const clientPorts = new Set();
    const servers = [];
    for (const line of stdout.split('\n')) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 5) continue;
      const [local, peer] = [cols[2], cols[3]];
      const localPort = Number(local.split(':').pop());
      const peerPort = Number(peer.split(':').pop());
      const pids = [...line.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
      if (ports.includes(peerPort) && pids.some((p) => clientPids.includes(p))) clientPorts.add(localPort);
      if (ports.includes(localPort)) servers.push({ peerPort, pids });
    }
    return [...new Set(servers.filter((s) => clientPorts.has(s.peerPort)).flatMap((s) => s.pids))];
  }

  /**
   * Restarts erg's sshd as a host losing it would: the listener is stopped (new connections are
   * refused for `downMs`), the sessions of `clientPids` are killed, then sshd is started again
   * the way up.sh starts it, and the suite waits until a key login works.
   */
  async restartSshd({ clientPids, downMs }) {
    const master = pidFromFile(this.sshdPidFile, 'sshd');
    if (master === null) throw new Error(`erg's sshd is not running (no live pid in ${this.sshdPidFile}): run bash ${this.upLine}`);
    const sessions = await this.sessionsOf(clientPids);
    const guard = this.guard(`sleep ${Math.ceil(downMs / 1000) + 30}; bash ${this.upLine} >/dev/null 2>&1`);
    this.sshdDown = true;
    try {
      process.kill(master, 'SIGTERM');
      for (const pid of sessions) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // the session ended by itself
        }
      }
      await waitFor(() => !alive(master), { timeoutMs: 10_000, intervalMs: 20, what: `sshd ${master} to stop` });
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await this.startSshd();
    } finally {
      guard.cancel();
      this.watchdogs.delete(guard);
    }
    return { master, sessionsKilled: sessions.length };
  }

  async startSshd() {
    if (pidFromFile(this.sshdPidFile, 'sshd') === null) {
      // sshd daemonizes: the command returns once it listens.
      const [file, ...args] = this.sshdStartCommand;
      await run(file, args).catch(() => undefined);
    }
    const probe = () =>
      waitFor(
        async () => {
          const c = new ClusterConnection({
            host: this.local.host, port: this.local.port, username: this.local.user, privateKey: this.local.privateKey,
            hostKeySha256: this.local.hostKeySha256, maxSessions: 1, connectTimeoutMs: 2000,
          });
          try {
            return (await c.exec('true')).code === 0;
          } finally {
            await c.close();
          }
        },
        { timeoutMs: 15_000, intervalMs: 200, what: "erg's sshd to accept a key login" },
      );
    try {
      await probe();
    } catch {
      // The direct start did not take: up.sh knows every way this can fail and says which.
      await run('bash', this.upArgv, { timeout: 120_000 });
      await probe();
    }
    this.sshdDown = false;
  }

  /**
   * SIGSTOPs slurmctld (clients hang as on an overloaded controller) and returns a function that
   * SIGCONTs it. Synchronous up to the stop, so that it can be called from a log line's handler.
   */
  stopSlurmctldNow(durationMs) {
    const pid = pidFromFile(this.slurmctldPidFile, 'slurmctld');
    if (pid === null) throw new Error(`slurmctld is not running (no live pid in ${this.slurmctldPidFile})`);
    const guard = this.guard(`sleep ${Math.ceil(durationMs / 1000) + 10}; kill -CONT ${pid}`);
    this.stoppedCtld = pid;
    process.kill(pid, 'SIGSTOP');
    return {
      pid,
      resume: () => {
        this.continueSlurmctld();
        guard.cancel();
        this.watchdogs.delete(guard);
      },
    };
  }

  continueSlurmctld() {
    if (this.stoppedCtld === null) return;
    try {
      process.kill(this.stoppedCtld, 'SIGCONT');
    } catch {
      // it is gone; up.sh would start a new one
    }
    this.stoppedCtld = null;
  }

  guard(script) {
    const g = watchdog(script);
    this.watchdogs.add(g);
    return g;
  }

  /**
   * Synchronous, for exit handlers: SIGCONT a stopped slurmctld. An sshd left down is restarted
   * by its watchdog (which is left running for that reason); the other watchdogs are cancelled.
   */
  restoreNow() {
    this.continueSlurmctld();
    if (!this.sshdDown) {
      for (const g of this.watchdogs) g.cancel();
      this.watchdogs.clear();
    }
  }

  /** Everything back as it was: slurmctld running, erg's sshd answering. */
  async restoreAll() {
    this.continueSlurmctld();
    if (this.sshdDown || pidFromFile(this.sshdPidFile, 'sshd') === null) await this.startSshd();
    for (const g of this.watchdogs) g.cancel();
    this.watchdogs.clear();
  }

  /**
   * Every Slurm job of `runs` (a job named `erg-<run id>`, or the run's task of the array it was
   * staged into: ownerOf), from squeue and from sacct (jobs active since `since`), merged by job
   * key (`<array job>_<task>` for a task) and carrying the run's id. A job whose accounting record still lacks its
   * name (slurmdbd can say `allocation` for a moment) is kept under the name squeue gave it.
   */
  async jobsOf(runs, since) {
    const owner = ownerOf(runs);
    const byKey = new Map();
    const [queued, accounted] = await Promise.all([this.slurm.squeue(), this.slurm.sacct(since)]);
    for (const job of [...accounted, ...queued]) {
      const runId = owner(job);
      if (runId === null) continue;
      // Keyed as runs store their job: `<array job>_<task>` for an array task.
      const key = slurmJobKey(job);
      const seen = byKey.get(key);
      byKey.set(key, { ...seen, ...job, jobId: key, runId, submitTime: job.submitTime ?? seen?.submitTime ?? null });
    }
    return [...byKey.values()];
  }

  /** Cancels the jobs (and array tasks) of `runs` that Slurm still holds; returns how many. */
  async cancelJobsOf(runs) {
    const owner = ownerOf(runs);
    const open = (await this.slurm.squeue()).filter((j) => owner(j) !== null && !['COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'].includes(j.state));
    await this.slurm.scancel([...new Set(open.map(slurmJobKey))]);
    return open.length;
  }

  async removeDir(dir) {
    if (!dir.startsWith(`${this.local.workDir}/`)) throw new Error(`refusing to remove ${dir}: not under ${this.local.workDir}`);
    await this.connection.exec(`rm -rf '${dir}'`);
  }

  async close() {
    await this.connection.close();
  }
}

module.exports = { LocalClusterOps, pidFromFile };
