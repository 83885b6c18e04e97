/**
 * UserRegexRunner: where the regular expressions users give erg run — metric regexes and the
 * phase regexes of a campaign's `phases`. They are RE2 (@erg/spec user-regex.ts), which matches
 * in time linear in the text: no pattern backtracks for ever. Linear is not cheap, though: a
 * pattern like `(?:.{0,30}a){10}c` runs at tens of kB/s, and 256 MiB of log at that speed is
 * hours. So user patterns never run on the scheduler's event loop but in a small pool of worker
 * threads (regex-worker.ts), and every task runs under a time budget; at its expiry the worker is
 * terminated (V8 stops it at once, mid-match) and replaced.
 *
 * Glossary
 * - task: one unit of work sent to a worker, e.g. "fold the matches of this metric's pattern in
 *   this batch of output" (`fold-metric`). Tasks are stateless: whatever state they carry (a
 *   metric's running fold) travels with them, so any idle worker can take any task.
 * - budget: the worker time a group of tasks may spend together (RegexBudget), e.g. all the
 *   scanning of one metric of a run. Only the time a task runs counts, not the time it waits for
 *   a worker — nor, on Linux, the time its thread waits for a CPU: a task is charged its worker
 *   thread's CPU time (/proc/self/task/<tid>/stat), so a busy machine does not spend the budgets
 *   of the metrics it delays (a scan of 50,000 lines took 20 times its CPU time in wall-clock time
 *   on two cores shared with three test chains). The wait is bounded all the same: a task ends at
 *   WALL_FACTOR times what it may spend, however little CPU it got. Where the thread's CPU time
 *   cannot be read, wall-clock time counts.
 *
 * One task is not a regex: `search-step`, a search campaign's step (@erg/strategy's contract,
 * search-runner.ts: fitting its surrogate takes 0.2-0.6 s), runs here too, for the same reason —
 * it must not hold the event loop — under its own budget (SEARCH_STEP_BUDGET_MS).
 *
 * Tasks beyond the pool's size wait in a FIFO queue. Idle workers do not keep the process alive.
 * A worker's start-up (loading its code) is not charged to any budget: it takes tasks once it
 * has said it is ready.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { SearchStep, SearchStepInput } from '@erg/strategy';
import { ErgError } from '@erg/spec';
import type { MetricFold } from './metric-fold';
import type { PhaseMarkBatch, PhaseMatchInput } from './phase-match';

/** A batch of whole lines of output: `length` bytes of UTF-8, shared by the tasks of every metric that reads it. */
export interface SharedBatch {
  bytes: SharedArrayBuffer;
  length: number;
}

/**
 * `fold-metric`: one metric's pattern over each line of a batch (log-lines.ts), every match folded
 * into its fold; a settled fold comes back as it went.
 */
export interface FoldMetricInput extends SharedBatch {
  pattern: string;
  fold: MetricFold;
}
export interface FoldMetricOutput {
  fold: MetricFold;
}

/** `match-phases`: the phase marks of a batch (phase-match.ts). While phase pattern k runs, the worker's progress says k. */
export interface MatchPhasesInput extends SharedBatch {
  phases: PhaseMatchInput;
}

/** The catalog of tasks a worker runs, by kind. */
export interface RegexTasks {
  'fold-metric': { input: FoldMetricInput; output: FoldMetricOutput };
  'match-phases': { input: MatchPhasesInput; output: PhaseMarkBatch };
  'search-step': { input: SearchStepInput; output: SearchStep };
}
export type RegexTaskKind = keyof RegexTasks;
export type TaskRequest = { [K in RegexTaskKind]: { id: number; kind: K; input: RegexTasks[K]['input'] } }[RegexTaskKind];
export type TaskReply = { id: number; ok: true; output: RegexTasks[RegexTaskKind]['output'] } | { id: number; ok: false; error: string };
/** What a worker posts once it has loaded (its start-up is not charged to any budget). */
export const READY = 'ready';

/** Worker time a group of tasks may spend, together (ms). */
export class RegexBudget {
  private spentMs = 0;

  constructor(readonly totalMs: number) {}

  get remainingMs(): number {
    return Math.max(0, this.totalMs - this.spentMs);
  }

  /** Called by the runner for every task that ran. */
  spend(ms: number): void {
    this.spentMs += ms;
  }

  /** Called when a task's timer, set to what remained, has fired (timers may fire a fraction of a ms early). */
  exhaust(): void {
    this.spentMs = Math.max(this.spentMs, this.totalMs);
  }
}

/** A task ran past its budget; its worker was terminated. `patternIndex`: the phase pattern that was running, when known. */
export class RegexBudgetExceededError extends ErgError<'ERG_REGEX_BUDGET_EXCEEDED'> {
  constructor(
    readonly budgetMs: number,
    readonly patternIndex: number | null,
  ) {
    super('ERG_REGEX_BUDGET_EXCEEDED', `a regular expression ran past its time budget of ${budgetMs} ms and was stopped`);
  }
}

/** A task failed inside its worker for a reason other than the budget: a pattern RE2 refuses, the worker out of memory. */
export class RegexTaskError extends ErgError<'ERG_REGEX_TASK_FAILED'> {
  constructor(message: string) {
    super('ERG_REGEX_TASK_FAILED', message);
  }
}

export interface UserRegexRunnerOptions {
  /** Worker threads at most. Default 2. */
  workers?: number;
  /** Heap limit of each worker (MiB): a pattern cannot take the scheduler's memory either. Default 256. */
  maxHeapMb?: number;
  /** A thread's CPU time (ms) by its Linux thread id; null where it cannot be read. Default threadCpuMs (tests give a clock of their own). */
  cpuClock?: (tid: number) => number | null;
  /** A task ends at this many times the budget it may spend, in wall-clock time. Default WALL_FACTOR. */
  wallFactor?: number;
}

/** A task ends at this many times the budget it may spend in wall-clock time, whatever CPU time it got. */
export const WALL_FACTOR = 4;

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;

/** A thread of this process's CPU time (user + system, ms) from /proc; null where there is none (not Linux, the thread gone). */
export function threadCpuMs(tid: number): number | null {
  if (!(tid > 0)) return null;
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
  } catch {
    return null;
  }
}

interface Queued {
  request: TaskRequest;
  budget: RegexBudget;
  resolve: (output: unknown) => void;
  reject: (err: unknown) => void;
}

interface Slot {
  worker: Worker;
  /** The worker has loaded and said so: only then does a task's time (its budget) start. */
  ready: boolean;
  /** progress[0]: index of the phase pattern the worker is running, -1 between patterns; progress[1]: the worker's thread id (0: unknown). */
  progress: Int32Array;
  running: Running | null;
}

/** A task on a worker: when it started (wall clock and its thread's CPU clock), what it may spend, its timer. */
interface Running extends Queued {
  startedAt: number;
  cpuAtStart: number | null;
  budgetMs: number;
  timer: NodeJS.Timeout;
}

export class UserRegexRunner {
  private readonly size: number;
  private readonly maxHeapMb: number;
  private readonly cpuClock: (tid: number) => number | null;
  private readonly wallFactor: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Queued[] = [];
  private nextId = 1;
  private closed = false;

  constructor(options: UserRegexRunnerOptions = {}) {
    this.size = options.workers ?? 2;
    this.maxHeapMb = options.maxHeapMb ?? 256;
    this.cpuClock = options.cpuClock ?? threadCpuMs;
    this.wallFactor = options.wallFactor ?? WALL_FACTOR;
    if (!Number.isInteger(this.size) || this.size < 1) throw new RangeError(`workers must be a positive integer, got ${this.size}`);
  }

  /** Workers started so far (for tests and metrics). */
  get workerCount(): number {
    return this.slots.length;
  }

  /**
   * Runs one task on an idle worker, charging its time to `budget`. Rejects with
   * RegexBudgetExceededError when the budget runs out first (at once if it is already spent).
   */
  run<K extends RegexTaskKind>(kind: K, input: RegexTasks[K]['input'], budget: RegexBudget): Promise<RegexTasks[K]['output']> {
    if (this.closed) return Promise.reject(new Error('the regex runner is closed'));
    return new Promise((resolve, reject) => {
      const request = { id: this.nextId++, kind, input } as TaskRequest;
      this.queue.push({ request, budget, resolve: resolve as (output: unknown) => void, reject });
      this.dispatch();
    });
  }

  /** Terminates every worker; queued and running tasks fail. */
  async close(): Promise<void> {
    this.closed = true;
    for (const queued of this.queue.splice(0)) queued.reject(new Error('the regex runner was closed'));
    await Promise.all(
      this.slots.splice(0).map((slot) => {
        if (slot.running) {
          clearTimeout(slot.running.timer);
          slot.running.reject(new Error('the regex runner was closed'));
        }
        return slot.worker.terminate();
      }),
    );
  }

  private dispatch(): void {
    try {
      this.assignTasks();
    } finally {
      this.holdProcess();
    }
  }

  /**
   * A worker keeps the process alive only while someone waits for it: when it runs a task, or is
   * starting while tasks are queued. Idle workers do not hold a process that is done.
   */
  private holdProcess(): void {
    for (const slot of this.slots) {
      if (slot.running || (!slot.ready && this.queue.length > 0)) slot.worker.ref();
      else slot.worker.unref();
    }
  }

  private assignTasks(): void {
    while (this.queue.length > 0) {
      if (this.slots.length < this.size && !this.slots.some((s) => s.running === null)) this.startSlot();
      const slot = this.slots.find((s) => s.ready && s.running === null);
      if (!slot) return; // dispatched again when a worker is ready or done
      const task = this.queue.shift()!;
      const budgetMs = task.budget.remainingMs;
      if (budgetMs <= 0) {
        task.reject(new RegexBudgetExceededError(task.budget.totalMs, null));
        continue;
      }
      const timer = setTimeout(() => this.expire(slot), budgetMs);
      slot.running = { ...task, startedAt: performance.now(), cpuAtStart: this.cpuOf(slot), budgetMs, timer };
      slot.worker.postMessage(task.request);
    }
  }

  private startSlot(): Slot {
    const progress = new Int32Array(new SharedArrayBuffer(8));
    progress[0] = -1;
    const slot: Slot = { worker: spawnWorker(progress.buffer as SharedArrayBuffer, this.maxHeapMb), ready: false, progress, running: null };
    this.watch(slot);
    this.slots.push(slot);
    return slot;
  }

  private watch(slot: Slot): void {
    const { worker } = slot;
    worker.on('message', (reply: TaskReply | typeof READY) => {
      if (reply === READY) {
        slot.ready = true;
        this.dispatch();
        return;
      }
      const task = slot.running;
      if (!task || task.request.id !== reply.id) return;
      this.settle(slot);
      if (reply.ok) task.resolve(reply.output);
      else task.reject(new RegexTaskError(reply.error));
    });
    // A worker that dies by itself (heap limit, a bug) fails its task and is replaced.
    const died = (why: string) => {
      if (slot.worker !== worker || this.closed) return;
      const task = slot.running;
      this.replace(slot);
      task?.reject(new RegexTaskError(`the regex worker stopped: ${why}`));
      this.dispatch();
    };
    worker.on('error', (err) => died(err.message));
    worker.on('exit', (code) => died(`exit code ${code}`));
    // After the listeners (adding a 'message' listener refs the worker's port again).
    this.holdProcess();
  }

  /** The slot's worker thread's CPU time now (ms); null where it cannot be read. */
  private cpuOf(slot: Slot): number | null {
    return this.cpuClock(Atomics.load(slot.progress, 1));
  }

  /** What the running task has spent: its thread's CPU time since it started, else the wall-clock time. */
  private spentMs(slot: Slot, task: Running): number {
    const cpu = task.cpuAtStart === null ? null : this.cpuOf(slot);
    return cpu === null ? performance.now() - task.startedAt : Math.max(0, cpu - task.cpuAtStart!);
  }

  /**
   * The task's timer fired: where it has spent less CPU time than it may (it waited for a CPU), it
   * goes on until it has, or until wallFactor times its budget in wall-clock time; else the budget
   * ran out: stop the worker mid-regex, say which pattern it was running.
   */
  private expire(slot: Slot): void {
    const task = slot.running;
    if (!task) return;
    const spent = this.spentMs(slot, task);
    const wallLeft = task.budgetMs * this.wallFactor - (performance.now() - task.startedAt);
    if (spent < task.budgetMs && wallLeft > 0) {
      // The CPU clock counts in 10 ms ticks: at least one tick before looking again.
      task.timer = setTimeout(() => this.expire(slot), Math.max(10, Math.min(task.budgetMs - spent, wallLeft)));
      return;
    }
    const index = Atomics.load(slot.progress, 0);
    task.budget.exhaust();
    this.replace(slot);
    task.reject(new RegexBudgetExceededError(task.budget.totalMs, index >= 0 ? index : null));
    this.dispatch();
  }

  /** Ends the slot's task bookkeeping: timer off, time charged, slot free. */
  private settle(slot: Slot): void {
    const task = slot.running!;
    clearTimeout(task.timer);
    task.budget.spend(this.spentMs(slot, task));
    slot.running = null;
    queueMicrotask(() => this.dispatch());
  }

  private replace(slot: Slot): void {
    if (slot.running) clearTimeout(slot.running.timer);
    slot.running = null;
    const old = slot.worker;
    slot.progress[0] = -1;
    slot.progress[1] = 0;
    slot.ready = false;
    slot.worker = spawnWorker(slot.progress.buffer as SharedArrayBuffer, this.maxHeapMb);
    this.watch(slot);
    void old.terminate();
  }
}

/**
 * Compiled (dist/), the worker is regex-worker.js beside this file. Run from the TypeScript
 * sources (Jest), a worker thread is a plain Node without Jest's transform: it then compiles the
 * .ts files it loads with @swc/core, the compiler Jest itself uses (a development dependency).
 */
function spawnWorker(progress: SharedArrayBuffer, maxHeapMb: number): Worker {
  const options = { workerData: { progress }, resourceLimits: { maxOldGenerationSizeMb: maxHeapMb } };
  const compiled = path.join(__dirname, 'regex-worker.js');
  if (existsSync(compiled)) return new Worker(compiled, options);
  const entry = path.join(__dirname, 'regex-worker.ts');
  return new Worker(TYPESCRIPT_BOOTSTRAP, { ...options, eval: true, workerData: { progress, entry } });
}

const TYPESCRIPT_BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
const Module = require('node:module');
const fs = require('node:fs');
const { transformSync } = Module.createRequire(workerData.entry)('@swc/core');
Module._extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename, jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
require(workerData.entry);
`;
