/**
 * Metric extraction over output of any size: a run's stdout.log and stderr.log are read as
 * streams, cut into batches of whole lines (BATCH_BYTES), and each batch is folded, metric by
 * metric, in the regex workers (regex-runner.ts) into the metrics' running folds (metric-fold.ts).
 * Memory stays at a few batches; time is bounded by the scan cap (bytes) and by each metric's
 * own regex budget (worker time): a metric whose regex runs past it, or that RE2 refuses, is the
 * only one left without a value, and the warning names only it.
 * A campaign's `phases` ride along on stdout.log: the same batches find its phase marks
 * (phase-match.ts, log-phases.ts), under a budget of their own.
 *
 * Only what the metrics of a log need is read:
 * - only `last` metrics: blocks from the end backwards (1 MiB, doubling to 16 MiB), each block
 *   scanned forwards; a metric is settled by the last block in which it matched;
 * - only `first` (and `last`) metrics: from the start until every `first` has matched;
 * - any other reduce (`min`, `max`, `sum`, `mean`, `count`), or phases: one forward pass over the
 *   whole log, or, when the log is larger than the cap, over its last `scanBytes` (a warning says
 *   so); a `first` metric then gets its own pass from the start.
 * Every pass reads at most `scanBytes` of the log.
 *
 * A batch always ends at a line end, and regexes are matched line by line (log-lines.ts), so a
 * match within a line is never cut; a line longer than BATCH_BYTES is matched in BATCH_BYTES
 * pieces (a warning says so).
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { formatSize, JobFileRefusedError, openJobFile, type StreamRunner } from '@erg/slurm';
import type { CampaignSpec } from '@erg/spec';
import { describeSlot, LogMarks, phasePatterns } from './log-phases';
import { foldResult, isSettled, newFold, type MetricFold } from './metric-fold';
import type { PhaseMarkBatch, PhasePattern } from './phase-match';
import { RegexBudget, RegexBudgetExceededError, RegexTaskError, type UserRegexRunner } from './regex-runner';

type MetricSpec = CampaignSpec['metrics'][number];
type LogPhase = NonNullable<CampaignSpec['phases']>[number];

/** Bytes of whole lines sent to the workers at once. */
export const BATCH_BYTES = 1024 * 1024;
const FIRST_BLOCK_BYTES = 1024 * 1024;
const MAX_BLOCK_BYTES = 16 * 1024 * 1024;

export interface LogWindowRequest {
  from: 'start' | 'end';
  offset?: number;
  maxBytes: number;
}

/** A part of a log: [start, start + length) of a file of `size` bytes, as chunks. */
export interface LogWindow {
  size: number;
  start: number;
  length: number;
  chunks: AsyncIterable<Buffer>;
}

/**
 * A log to scan. `open` answers null when the file does not exist and throws JobFileRefusedError
 * when erg will not read it (a FIFO, a directory, …).
 */
export interface LogSource {
  /** The file's name as users know it: `stdout.log`. */
  readonly name: string;
  open(request: LogWindowRequest): Promise<LogWindow | null>;
}

export interface MetricScanLimits {
  /** Most bytes of a log one pass reads (ERG_METRIC_SCAN_BYTES). */
  scanBytes: number;
  /**
   * Worker time each metric's regex may take over the run's logs, and the phase regexes together
   * (ERG_METRIC_REGEX_BUDGET_MS): one metric's budget is never another's.
   */
  regexBudgetMs: number;
}

export interface MetricScanOutcome {
  /** Every metric of the spec: its value, or null (no numeric match, or not computed: see warnings). */
  metrics: Record<string, number | null>;
  /** What could not be done in full, in words a researcher can act on (stored with the run). */
  warnings: string[];
  /** Logs erg refused to read: the run's fault, to be shown as its reason. */
  refused: JobFileRefusedError[];
}

export interface RunLogScanOutcome extends MetricScanOutcome {
  /** The phase marks found in stdout.log; null when the campaign has no phases. */
  marks: LogMarks | null;
}

/** Computes every metric of `metrics` from the run's logs. Throws only for infrastructure failures (SSH). */
export async function scanMetrics(
  metrics: readonly MetricSpec[],
  logs: { stdout: LogSource; stderr: LogSource },
  runner: UserRegexRunner,
  limits: MetricScanLimits,
): Promise<MetricScanOutcome> {
  const { metrics: values, warnings, refused } = await scanRunLogs({ metrics }, logs, runner, limits);
  return { metrics: values, warnings, refused };
}

/**
 * Computes every metric and finds every phase mark (of `phases`, in stdout.log) in one scan of
 * the run's logs. Throws only for infrastructure failures (SSH).
 */
export async function scanRunLogs(
  { metrics, phases = [] }: { metrics: readonly MetricSpec[]; phases?: readonly LogPhase[] },
  logs: { stdout: LogSource; stderr: LogSource },
  runner: UserRegexRunner,
  limits: MetricScanLimits & { maxMarks?: number },
): Promise<RunLogScanOutcome> {
  const outcome: RunLogScanOutcome = { metrics: Object.fromEntries(metrics.map((m) => [m.name, null])), warnings: [], refused: [], marks: null };
  for (const source of ['stdout', 'stderr'] as const) {
    const own = metrics.filter((m) => m.source === source);
    const phaseScan = source === 'stdout' && phases.length > 0 ? new PhaseScan(phases, new LogMarks(limits.maxMarks), limits.regexBudgetMs) : null;
    if (phaseScan) outcome.marks = phaseScan.marks;
    if (own.length === 0 && !phaseScan) continue;
    const scan = new LogScan(logs[source], own, runner, limits, phaseScan);
    try {
      await scan.run();
    } catch (err) {
      if (err instanceof JobFileRefusedError) outcome.refused.push(err);
      else throw err;
    }
    outcome.warnings.push(...scan.warnings);
    if (phaseScan) outcome.warnings.push(...phaseScan.marks.warnings(phases, logs[source].name));
    Object.assign(outcome.metrics, scan.results());
  }
  return outcome;
}

/** The phases a log scan looks for, and the marks it has found so far. */
class PhaseScan {
  /** The patterns still read: one RE2 refuses leaves (a spec stored before erg ran regexes with RE2). */
  patterns: PhasePattern[];
  readonly budget: RegexBudget;
  /** Where in the log the last batch scanned for phases ended: where they stopped, if they were stopped. */
  readUpTo = 0;
  /** Past the budget: no more batches are scanned for phases. */
  stopped = false;

  constructor(
    readonly phases: readonly LogPhase[],
    readonly marks: LogMarks,
    budgetMs: number,
  ) {
    this.patterns = phasePatterns(phases);
    this.budget = new RegexBudget(budgetMs);
  }
}

/** The scan of one log for its metrics (see the module's comment for the passes). */
class LogScan {
  readonly warnings: string[] = [];
  private readonly folds: MetricFold[];
  private readonly budgets: RegexBudget[];
  private readonly finished = new Set<number>();
  /** Metrics stopped by their budget or refused by RE2: left without a value, already warned about. */
  private readonly stopped = new Set<number>();
  private cutLines = 0;

  constructor(
    private readonly source: LogSource,
    private readonly metrics: readonly MetricSpec[],
    private readonly runner: UserRegexRunner,
    private readonly limits: MetricScanLimits,
    private readonly phases: PhaseScan | null = null,
  ) {
    this.folds = metrics.map((m) => newFold(m.reduce));
    this.budgets = metrics.map(() => new RegexBudget(limits.regexBudgetMs));
  }

  async run(): Promise<void> {
    const all = this.metrics.map((_, i) => i);
    const lasts = all.filter((i) => this.metrics[i]!.reduce === 'last');
    const firsts = all.filter((i) => this.metrics[i]!.reduce === 'first');
    const others = all.filter((i) => !lasts.includes(i) && !firsts.includes(i));
    // Phases need every line (their marks are the whole log's), as `others` do.
    const wholeLog = others.length > 0 || this.phases !== null;
    const scanBytes = this.limits.scanBytes;
    try {
      if (wholeLog) {
        const window = await this.source.open({ from: 'end', maxBytes: scanBytes });
        if (!window) return this.finish(all);
        if (window.start === 0) {
          await this.forward(window, all, 'line', undefined, undefined, true);
          return this.finish(all);
        }
        // Larger than the cap: its last scanBytes hold the exact `last` values (where they match).
        await this.forward(window, [...others, ...lasts], 'drop', undefined, undefined, true);
        const read = `were read from its last ${formatSize(window.length)} (ERG_METRIC_SCAN_BYTES)`;
        if (others.length > 0) this.warnings.push(`${this.source.name} is ${formatSize(window.size)}; metrics ${this.names(others)} ${read}`);
        if (this.phases) this.warnings.push(`${this.source.name} is ${formatSize(window.size)}; phases ${this.phases.phases.map((p) => p.name).join(', ')} ${read}`);
        this.noteUnmatched(lasts, `in the last ${formatSize(window.length)} of ${this.source.name} (${formatSize(window.size)})`);
        this.finish([...others, ...lasts]);
      }
      if (firsts.length > 0) await this.firstPass(firsts);
      if (lasts.length > 0 && !wholeLog) await this.lastPass(lasts);
    } finally {
      if (this.cutLines > 0) {
        this.warnings.push(`${this.source.name} has lines longer than ${formatSize(BATCH_BYTES)}; metrics matched them in pieces of that size`);
      }
    }
  }

  /** Values of the finished metrics; the others (stopped, refused, or not read after a refused log) are null. */
  results(): Record<string, number | null> {
    return Object.fromEntries(this.metrics.map((m, i) => [m.name, this.finished.has(i) && !this.stopped.has(i) ? foldResult(this.folds[i]!) : null]));
  }

  /** From the start until every `first` metric has matched, at most scanBytes. */
  private async firstPass(firsts: number[]): Promise<void> {
    const window = await this.source.open({ from: 'start', maxBytes: this.limits.scanBytes });
    if (!window) return this.finish(firsts);
    await this.forward(window, firsts, 'line', undefined, () => firsts.every((i) => this.stopped.has(i) || this.folds[i]!.first !== null));
    if (window.length < window.size) this.noteUnmatched(firsts, `in the first ${formatSize(window.length)} of ${this.source.name} (${formatSize(window.size)})`);
    this.finish(firsts);
  }

  /** Blocks from the end backwards until every `last` metric has matched, at most scanBytes in all. */
  private async lastPass(lasts: number[]): Promise<void> {
    const scanBytes = this.limits.scanBytes;
    let active = lasts;
    let block = Math.min(FIRST_BLOCK_BYTES, scanBytes);
    let window = await this.source.open({ from: 'end', maxBytes: block });
    if (!window) return this.finish(lasts);
    let read = 0;
    // The start of the line that straddles a block's beginning: scanned with the block before.
    let carry: Buffer = Buffer.alloc(0);
    for (;;) {
      carry = await this.forward(window, active, window.start === 0 ? 'line' : 'carry', carry);
      read += window.length;
      const settled = active.filter((i) => this.stopped.has(i) || this.folds[i]!.last !== null);
      this.finish(settled);
      active = active.filter((i) => !settled.includes(i));
      if (active.length === 0 || window.start === 0) break;
      if (read >= scanBytes) {
        this.noteUnmatched(active, `in the last ${formatSize(read)} of ${this.source.name} (${formatSize(window.size)})`);
        break;
      }
      block = Math.min(block * 2, MAX_BLOCK_BYTES, scanBytes - read, window.start);
      const next = await this.source.open({ from: 'start', offset: window.start - block, maxBytes: block });
      if (!next) break; // deleted meanwhile: what was read stands
      window = next;
    }
    this.finish(lasts);
  }

  /**
   * Folds a window's lines into the `active` metrics (and, `withPhases`, finds the phase marks in
   * them). `head` says where the window starts: at a line (`line`), or inside one whose start was
   * not read (`drop` it, or `carry`: return it, for the scan of the block before). `trailing`
   * completes the window's last line.
   */
  private async forward(
    window: LogWindow, active: number[], head: 'line' | 'drop' | 'carry', trailing?: Buffer, done?: () => boolean, withPhases = false,
  ): Promise<Buffer> {
    // Where in the log the batches' bytes start: after the head that is not scanned here.
    let skipped = 0;
    const batches = new LineBatcher((bytes, length, at) => this.fold(active, bytes, length, withPhases ? window.start + skipped + at : null), done);
    const headParts: Buffer[] = [];
    let headBytes = 0;
    let inHead = head !== 'line';
    for await (const chunk of window.chunks) {
      let data = chunk;
      if (inHead) {
        const newline = data.indexOf(10);
        const part = newline < 0 ? data : data.subarray(0, newline + 1);
        skipped += part.length;
        if (head === 'carry' && headBytes < BATCH_BYTES) {
          headParts.push(part.subarray(0, BATCH_BYTES - headBytes));
          headBytes += Math.min(part.length, BATCH_BYTES - headBytes);
        }
        if (newline < 0) continue;
        inHead = false;
        data = data.subarray(newline + 1);
      }
      await batches.push(data);
      // Leaving the loop stops the remote read.
      if (batches.stopped) break;
    }
    if (!batches.stopped && trailing && trailing.length > 0) await batches.push(trailing);
    await batches.end();
    this.cutLines += batches.cutLines;
    return Buffer.concat(headParts);
  }

  /**
   * One batch through the workers: a task per metric still reading, each under the metric's own
   * budget (the tasks run side by side on the pool's workers), and one for the phases when
   * `offset` (where the batch lies in the log) is given.
   */
  private async fold(active: number[], bytes: SharedArrayBuffer, length: number, offset: number | null): Promise<void> {
    const tasks = active
      .filter((i) => !this.stopped.has(i) && !isSettled(this.folds[i]!))
      .map((i) =>
        this.runner
          .run('fold-metric', { pattern: this.metrics[i]!.regex, fold: this.folds[i]!, bytes, length }, this.budgets[i]!)
          .then((out) => void (this.folds[i] = out.fold), (err: unknown) => this.stopMetric(i, err)),
      );
    const phases = offset !== null && this.phases && !this.phases.stopped && !this.phases.marks.full && this.phases.patterns.length > 0 ? this.phases : null;
    if (phases) {
      const patterns = phases.patterns;
      tasks.push(
        this.runner
          .run('match-phases', { phases: { patterns, offset: offset!, maxMarks: phases.marks.remaining }, bytes, length }, phases.budget)
          .then((marks) => this.addMarks(phases, patterns, marks, offset! + length), (err: unknown) => this.stopPhases(phases, patterns, err)),
      );
    }
    await Promise.all(tasks);
  }

  /** A metric's task failed: past its budget, or its regex refused by RE2. Only that metric is left without a value. */
  private stopMetric(i: number, err: unknown): void {
    const metric = this.metrics[i]!;
    const who = `metric "${metric.name}" (regex ${JSON.stringify(metric.regex)})`;
    if (err instanceof RegexBudgetExceededError) {
      this.warnings.push(`${who} ran past its regex time budget of ${formatSeconds(err.budgetMs)} (ERG_METRIC_REGEX_BUDGET_MS, per metric) on ${this.source.name} and was stopped; it has no value`);
    } else if (err instanceof RegexTaskError) {
      this.warnings.push(`${who} could not be matched on ${this.source.name}: ${err.message}; it has no value`);
    } else throw err;
    this.stopped.add(i);
  }

  /** A batch's marks; a pattern RE2 refused is named once and read no more. */
  private addMarks(phases: PhaseScan, patterns: PhasePattern[], marks: PhaseMarkBatch, readUpTo: number): void {
    phases.marks.add(marks, patterns);
    phases.readUpTo = readUpTo;
    marks.refused.forEach((problem, k) => {
      if (problem === null || !phases.patterns.includes(patterns[k]!)) return;
      this.warnings.push(`${describeSlot(phases.phases, patterns[k]!.slot)} could not be matched on ${this.source.name}: ${problem}; it gave no marks`);
      phases.patterns = phases.patterns.filter((p) => p !== patterns[k]);
    });
  }

  /** The phases' task ran past their budget (or failed): the marks found before stay, no more are read. */
  private stopPhases(phases: PhaseScan, patterns: PhasePattern[], err: unknown): void {
    const upTo = `phase marks were read up to ${formatSize(phases.readUpTo)} into it only`;
    if (err instanceof RegexBudgetExceededError) {
      const culprit = err.patternIndex === null ? undefined : patterns[err.patternIndex];
      const who = culprit ? describeSlot(phases.phases, culprit.slot) : 'the phase regexes';
      this.warnings.push(`${who} ran past the phases' regex time budget of ${formatSeconds(err.budgetMs)} (ERG_METRIC_REGEX_BUDGET_MS) on ${this.source.name} and ${culprit ? 'was' : 'were'} stopped; ${upTo}`);
    } else if (err instanceof RegexTaskError) {
      this.warnings.push(`the phase regexes could not be matched on ${this.source.name}: ${err.message}; ${upTo}`);
    } else throw err;
    phases.stopped = true;
  }

  private finish(indices: number[]): void {
    for (const i of indices) this.finished.add(i);
  }

  private noteUnmatched(indices: number[], where: string): void {
    const unmatched = indices.filter((i) => !this.stopped.has(i) && this.folds[i]!.values === 0);
    if (unmatched.length > 0) this.warnings.push(`metrics ${this.names(unmatched)} had no numeric match ${where} (ERG_METRIC_SCAN_BYTES)`);
  }

  private names(indices: number[]): string {
    return indices.map((i) => this.metrics[i]!.name).join(', ');
  }
}

/**
 * Gathers bytes into batches of whole lines (a batch ends after its last newline; the rest starts
 * the next batch) and hands each to `emit`. One batch is in flight while the next fills, so
 * reading and matching overlap; `push` waits when the next batch is full and the last is not done.
 */
class LineBatcher {
  /** True once `done` said so after a batch: the reader may stop. */
  stopped = false;
  /** Batches cut inside a line longer than BATCH_BYTES. */
  cutLines = 0;
  // Shared: every metric's task of a batch reads the same bytes, none copies them.
  private buffer = new Uint8Array(new SharedArrayBuffer(BATCH_BYTES));
  private used = 0;
  private inFlight: Promise<void> = Promise.resolve();

  /** Bytes handed to `emit` so far: where the next batch starts among those pushed. */
  private sent = 0;

  constructor(
    /** `at`: the batch's first byte, counted from the first byte pushed. */
    private readonly emit: (bytes: SharedArrayBuffer, length: number, at: number) => Promise<void>,
    private readonly done?: () => boolean,
  ) {}

  async push(data: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < data.length && !this.stopped) {
      const n = Math.min(BATCH_BYTES - this.used, data.length - offset);
      this.buffer.set(data.subarray(offset, offset + n), this.used);
      this.used += n;
      offset += n;
      if (this.used === BATCH_BYTES) await this.sendLines();
    }
  }

  /** Sends what is left (the last line needs no newline) and waits for every batch. */
  async end(): Promise<void> {
    const length = this.used;
    if (!this.stopped && length > 0) await this.send(this.take(length), length);
    await this.inFlight;
  }

  private async sendLines(): Promise<void> {
    const lastNewline = this.buffer.lastIndexOf(10);
    let cut = lastNewline + 1;
    if (lastNewline < 0) {
      cut = BATCH_BYTES;
      this.cutLines++;
    }
    await this.send(this.take(cut), cut);
  }

  /** Hands the current buffer over, starting a new one with its bytes from `keepFrom` on. */
  private take(keepFrom: number): SharedArrayBuffer {
    const full = this.buffer;
    const kept = Math.max(0, this.used - keepFrom);
    this.buffer = new Uint8Array(new SharedArrayBuffer(BATCH_BYTES));
    if (kept > 0) this.buffer.set(full.subarray(keepFrom, this.used));
    this.used = kept;
    return full.buffer as SharedArrayBuffer;
  }

  private async send(bytes: SharedArrayBuffer, length: number): Promise<void> {
    const at = this.sent;
    this.sent += length;
    await this.inFlight;
    if (this.stopped) return;
    const task = this.emit(bytes, length, at).then(() => {
      if (this.done?.()) this.stopped = true;
    });
    // Observed here so that a failure is never "unhandled"; it is thrown by the next wait.
    task.catch(() => undefined);
    this.inFlight = task;
  }
}

/** A log of a run directory on the cluster, read with @erg/slurm's job-file reader. */
export function clusterLogSource(runner: StreamRunner, runDir: string, file: string, timeoutMs: number): LogSource {
  return {
    name: file,
    open: async (request) => {
      const opened = await openJobFile(runner, { runDir, file, timeoutMs, ...request });
      if (opened.status === 'missing') return null;
      if (opened.status === 'refused') throw opened.error;
      return opened;
    },
  };
}

/** A log in a local file (tests, bench/metrics-scan.js). */
export function localLogSource(path: string, name = path): LogSource {
  return {
    name,
    open: async (request) => {
      const size = await stat(path).then((s) => s.size, (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? null : Promise.reject(err)));
      if (size === null) return null;
      const start = request.from === 'end' ? Math.max(0, size - request.maxBytes) : Math.min(request.offset ?? 0, size);
      const length = Math.min(request.maxBytes, size - start);
      const chunks = length === 0 ? (async function* () {})() : createReadStream(path, { start, end: start + length - 1, highWaterMark: 256 * 1024 });
      return { size, start, length, chunks };
    },
  };
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
