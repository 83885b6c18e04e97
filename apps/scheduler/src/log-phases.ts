/**
 * A campaign's `phases` (@erg/spec log-phases.ts) on the scheduler's side: which regexes the log
 * scan runs (phasePatterns), the marks it gathers from its batches (LogMarks, as columns: up to
 * MAX_NODE_MARKS of them), and how they become marks of the run (run_marks) with a stable
 * identity, so that finalizing a run again stores nothing twice.
 *
 * A mark's offset: LOG_MARK_OFFSET_BASE + (byte offset of its line in stdout.log) × SLOTS_PER_LINE
 * + its slot (phase index × 3 + 0 begin, 1 end, 2 step). Above the base, so it never meets the
 * offset of a mark the workload wrote to `<node>.marks` (an agent reads at most ~257 MB of one).
 */
import type { BatchMark, CampaignSpec, MarkKind, SampleTimeBounds } from '@erg/spec';
import { MAX_LOG_PHASES, MAX_NODE_MARKS, PHASE_REGEX_FIELDS } from '@erg/spec';
import type { PhaseMarkBatch, PhasePattern } from './phase-match';

type LogPhase = NonNullable<CampaignSpec['phases']>[number];

/** Where log marks' offsets begin (2^40): far above any byte offset of a `<node>.marks` file. */
export const LOG_MARK_OFFSET_BASE = 2 ** 40;
/** Slots one line has: a begin, an end and a step for each of the MAX_LOG_PHASES entries. */
export const SLOTS_PER_LINE = PHASE_REGEX_FIELDS.length * MAX_LOG_PHASES;
/** The `writer` of a mark read from the log. */
export const LOG_MARK_WRITER = 'log';
/** Most marks taken from one run's log: what erg keeps of one node's own marks (MAX_NODE_MARKS). */
export const MAX_LOG_MARKS = MAX_NODE_MARKS;

/** A mark's identity among its run's marks of one node: stable for its line, phase and kind. */
export function logMarkOffset(lineOffset: number, slot: number): number {
  return LOG_MARK_OFFSET_BASE + lineOffset * SLOTS_PER_LINE + slot;
}

/** The regexes of `phases`, in the order a worker runs them (phase by phase, begin, end, step). */
export function phasePatterns(phases: readonly LogPhase[]): PhasePattern[] {
  return phases.flatMap((phase, i) =>
    PHASE_REGEX_FIELDS.flatMap((field, k) => {
      const source = phase[field];
      return source === undefined ? [] : [{ source, slot: i * PHASE_REGEX_FIELDS.length + k, format: phase.timeFormat ?? null }];
    }),
  );
}

/** Which phase regex a slot is, in words: `phase "optimizer" (begin regex "…")`. */
export function describeSlot(phases: readonly LogPhase[], slot: number): string {
  const phase = phases[Math.floor(slot / PHASE_REGEX_FIELDS.length)]!;
  const field = PHASE_REGEX_FIELDS[slot % PHASE_REGEX_FIELDS.length]!;
  return `phase "${phase.name}" (${field} regex ${JSON.stringify(phase[field])})`;
}

/** The marks a log scan found, in the order of the log's batches, and what it had to skip. */
export class LogMarks {
  private lines = new Float64Array(1024);
  private slots = new Uint8Array(1024);
  private times = new Float64Array(1024);
  private size = 0;
  /** Per slot: matches whose `t` was not a time, and the first such value. */
  private readonly unparsed = new Map<number, { count: number; example: string }>();
  /** The limit (MAX_LOG_MARKS) was reached: later matches were not kept. */
  full = false;

  constructor(readonly maxMarks: number = MAX_LOG_MARKS) {}

  get count(): number {
    return this.size;
  }

  get remaining(): number {
    return Math.max(0, this.maxMarks - this.size);
  }

  /** Adds one batch's marks; `patterns` is what the batch's task was given. */
  add(batch: PhaseMarkBatch, patterns: readonly PhasePattern[]): void {
    const n = Math.min(batch.t.length, this.remaining);
    this.reserve(this.size + n);
    for (let i = 0; i < n; i++) {
      this.lines[this.size] = batch.lines[i]!;
      this.slots[this.size] = batch.slots[i]!;
      this.times[this.size] = batch.t[i]!;
      this.size++;
    }
    if (batch.full || n < batch.t.length) this.full = true;
    batch.unparsed.forEach((count, k) => {
      if (count === 0) return;
      const slot = patterns[k]!.slot;
      const seen = this.unparsed.get(slot);
      if (seen) seen.count += count;
      else this.unparsed.set(slot, { count, example: batch.unparsedExample[k] ?? '' });
    });
  }

  /**
   * The marks as the run stores them: those inside `bounds` (the times the run's samples may
   * carry), made one at a time (a million marks need not all be objects at once).
   */
  *marksWithin(phases: readonly LogPhase[], bounds: SampleTimeBounds): Generator<BatchMark> {
    for (let i = 0; i < this.size; i++) {
      const t = this.times[i]!;
      if (t < bounds.minT || t > bounds.maxT) continue;
      const slot = this.slots[i]!;
      const kind = PHASE_REGEX_FIELDS[slot % PHASE_REGEX_FIELDS.length] as MarkKind;
      const name = phases[Math.floor(slot / PHASE_REGEX_FIELDS.length)]!.name;
      yield { offset: logMarkOffset(this.lines[i]!, slot), kind, name, t, clock: 'wall', writer: LOG_MARK_WRITER };
    }
  }

  /**
   * Per slot, the marks outside `bounds`, which marksWithin leaves out: a log that prints local
   * time without an offset is read as UTC, hours off.
   */
  outside(bounds: SampleTimeBounds): Map<number, number> {
    const out = new Map<number, number>();
    for (let i = 0; i < this.size; i++) {
      const t = this.times[i]!;
      if (t < bounds.minT || t > bounds.maxT) out.set(this.slots[i]!, (out.get(this.slots[i]!) ?? 0) + 1);
    }
    return out;
  }

  /** What the scan skipped, in words a researcher can act on (for the run's warnings). */
  warnings(phases: readonly LogPhase[], log: string): string[] {
    const out: string[] = [];
    for (const [slot, { count, example }] of [...this.unparsed].sort((a, b) => a[0] - b[0])) {
      const phase = phases[Math.floor(slot / PHASE_REGEX_FIELDS.length)]!;
      const format = phase.timeFormat ? `as ${phase.timeFormat}` : 'as an ISO 8601 time or Unix seconds or milliseconds';
      out.push(
        `${describeSlot(phases, slot)}: ${count} ${count === 1 ? 'line' : 'lines'} of ${log} had a timestamp (?<t>…) that does not read ${format} ` +
          `(first: ${JSON.stringify(example)}) and ${count === 1 ? 'was' : 'were'} skipped`,
      );
    }
    if (this.full) out.push(`${log} has more than ${this.maxMarks.toLocaleString('en-US')} phase marks; those after the first ${this.maxMarks.toLocaleString('en-US')} were not kept (MAX_NODE_MARKS)`);
    return out;
  }

  private reserve(capacity: number): void {
    if (capacity <= this.times.length) return;
    let size = this.times.length;
    while (size < capacity) size *= 2;
    const grow = <T extends Float64Array | Uint8Array>(old: T, make: (n: number) => T): T => {
      const next = make(size);
      next.set(old.subarray(0, this.size));
      return next;
    };
    this.lines = grow(this.lines, (n) => new Float64Array(n));
    this.slots = grow(this.slots, (n) => new Uint8Array(n));
    this.times = grow(this.times, (n) => new Float64Array(n));
  }
}

/** The marks of `outside` in words: a timestamp read as UTC that was local time is the usual cause. */
export function describeOutside(phases: readonly LogPhase[], outside: ReadonlyMap<number, number>, log: string): string[] {
  return [...outside].sort((a, b) => a[0] - b[0]).map(([slot, count]) =>
    `${describeSlot(phases, slot)}: ${count} ${count === 1 ? 'mark' : 'marks'} of ${log} lay outside the run's time ` +
      `(from shortly before it was submitted to shortly after it ended) and ${count === 1 ? 'was' : 'were'} skipped; ` +
      'a time without an offset is read as UTC: if the log prints local time, print its offset too (e.g. +02:00)',
  );
}
