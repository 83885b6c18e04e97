// The chaos suite's supervised processes: the built API and scheduler (apps/*/dist/main.js) as
// child processes that the suite kills and a supervisor restarts, as systemd's Restart=always
// would. Every line they print goes to a log file of their own; schedulers' lines are also read,
// so that one can be SIGKILLed the moment it logs a chosen phase of a cycle.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const { EventEmitter } = require('node:events');
const { waitFor } = require('@erg/testkit');

const root = path.resolve(__dirname, '..', '..');

/** What the scheduler logs at start of each phase of a cluster's cycle (at debug level). */
const PHASE_MESSAGE = 'cycle phase';
const PHASES = ['claim', 'staging', 'sbatch', 'recording', 'tracking', 'finalizing'];

/**
 * One slot of the instance (`api-0`, `scheduler-2`): at most one process at a time, restarted
 * when it dies. A death the suite caused is restarted by the suite (after its own delay); any
 * other exit counts as unexpected, is recorded and restarted after `restartDelayMs`.
 */
class AppProcess extends EventEmitter {
  /**
   * @param {{ role: 'api' | 'scheduler', slot: number, env: Record<string,string>, logDir: string,
   *   url?: string, restartDelayMs?: number, now: () => number }} options
   */
  constructor(options) {
    super();
    this.role = options.role;
    this.slot = options.slot;
    this.name = `${options.role}-${options.slot}`;
    this.env = options.env;
    this.url = options.url ?? null;
    this.restartDelayMs = options.restartDelayMs ?? 1000;
    this.now = options.now;
    this.log = fs.createWriteStream(path.join(options.logDir, `${this.name}.log`), { flags: 'a' });
    /** @type {import('node:child_process').ChildProcess | null} */
    this.child = null;
    this.exited = Promise.resolve();
    /** Exits the suite did not cause: { at, pid, code, signal }. */
    this.unexpectedExits = [];
    this.starts = 0;
    this.stopped = false;
    this.restartTimer = null;
  }

  get pid() {
    return this.child?.pid ?? null;
  }

  get running() {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Spawns the process and resolves once it is ready (the API answers /healthz; the scheduler logged that it started). */
  async start() {
    if (this.stopped) return;
    const script = path.join(root, 'apps', this.role, 'dist', 'main.js');
    const child = spawn(process.execPath, [script], { env: { ...process.env, ...this.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.starts++;
    const started = this.now();
    child.expected = false;
    this.log.write(`--- ${new Date().toISOString()} start #${this.starts} pid ${child.pid}\n`);
    let ready = false;
    let resolveReady;
    const readyLine = new Promise((resolve) => (resolveReady = resolve));
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      this.log.write(line + '\n');
      if (child !== this.child || child.expected) return; // buffered lines of a process already killed
      if (this.role === 'scheduler') {
        if (!ready && line.includes('"scheduler started"')) resolveReady(true);
        if (line.includes(`"${PHASE_MESSAGE}"`)) {
          let entry = null;
          try {
            entry = JSON.parse(line);
          } catch {
            return;
          }
          if (entry.msg === PHASE_MESSAGE) this.emit('phase', { phase: entry.phase, cluster: entry.cluster, process: this });
        }
      }
    });
    child.stderr.on('data', (chunk) => this.log.write(chunk));
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.log.write(`--- ${new Date().toISOString()} pid ${child.pid} exited (code ${code}, signal ${signal})\n`);
        resolveReady(false);
        if (!child.expected && !this.stopped) {
          this.unexpectedExits.push({ at: this.now(), pid: child.pid, code, signal });
          this.emit('unexpected-exit', { code, signal });
          this.restartTimer = setTimeout(() => {
            this.restartTimer = null;
            if (this.child === child) this.start().catch((err) => this.log.write(`--- restart failed: ${err.message}\n`));
          }, this.restartDelayMs);
        }
        resolve();
      }),
    );
    if (this.role === 'api') {
      await waitFor(
        async () => {
          if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${this.name} exited while starting (see its log)`);
          const res = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(1000) });
          return res.ok;
        },
        { timeoutMs: 60_000, intervalMs: 100, what: `${this.name} to answer /healthz` },
      );
    } else {
      const ok = await Promise.race([
        readyLine,
        new Promise((resolve) => setTimeout(() => resolve('timeout'), 60_000).unref()),
      ]);
      if (ok !== true) throw new Error(`${this.name} did not start (${ok === 'timeout' ? 'no "scheduler started" within 60 s' : 'it exited'}; see its log)`);
    }
    ready = true;
    return { pid: child.pid, startMs: this.now() - started };
  }

  /** Kills the current process with `signal` as the suite's own fault: it is not restarted by the supervisor. */
  kill(signal = 'SIGKILL') {
    const child = this.child;
    if (!child || !this.running) return Promise.resolve(null);
    child.expected = true;
    const pid = child.pid;
    child.kill(signal);
    return this.exited.then(() => pid);
  }

  /** Stops for good: SIGTERM (graceful), SIGKILL after 10 s. */
  async stop() {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (child && this.running) {
      child.expected = true;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await this.exited;
      clearTimeout(killer);
    }
    await new Promise((resolve) => this.log.end(resolve));
  }
}

/**
 * Arms a one-shot trigger over the schedulers: `action(process)` runs synchronously, from inside
 * the line handler, for the first of them to log `phase` for `cluster` after this call — so the
 * few milliseconds between the log line and the action are all the process gets. Resolves with
 * the process, its pid and the time, or null when no scheduler logged that phase within `timeoutMs`.
 */
function onNextPhase(schedulers, { phase, cluster, timeoutMs, now }, action) {
  if (!PHASES.includes(phase)) throw new Error(`unknown phase ${phase} (${PHASES.join(', ')})`);
  return new Promise((resolve) => {
    const listeners = [];
    const done = (value) => {
      clearTimeout(timer);
      for (const [proc, fn] of listeners) proc.off('phase', fn);
      resolve(value);
    };
    for (const proc of schedulers) {
      const fn = (event) => {
        if (event.phase !== phase || event.cluster !== cluster || !proc.running) return;
        const pid = proc.pid;
        action(proc);
        done({ process: proc, pid, at: now() });
      };
      proc.on('phase', fn);
      listeners.push([proc, fn]);
    }
    const timer = setTimeout(() => done(null), timeoutMs);
  });
}

/** SIGKILLs the first scheduler to log `phase` for `cluster` (see onNextPhase). */
function killAtPhase(schedulers, options) {
  return onNextPhase(schedulers, options, (proc) => proc.kill('SIGKILL'));
}

module.exports = { AppProcess, onNextPhase, killAtPhase, PHASES, PHASE_MESSAGE };
