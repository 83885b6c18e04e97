import fs from 'node:fs';
import { MAX_BATCH_MARKS, MAX_MARK_LINE_BYTES, MAX_NODE_MARKS, parseMarkLine, type BatchMark, type MarkLine } from '@erg/spec/marks';
import { nowMs, roundToMicros } from './clock';
import { errorMessage, type Logger } from './log';

// The workload's phase marks (@erg/spec marks.ts): `<node>.marks` in the telemetry folder, one
// line per mark, appended by the writers on this node. The agent tails it from a byte offset and
// each closed batch carries the marks read since the last one, so marks are spooled, pushed and
// pulled exactly like samples. A mark's identity is its line's byte offset in the file: a
// restarted agent reads the file again from 0 and sends every mark again; ingest keeps the first
// copy. The file is the buffer: at most one batch's worth of marks is held in memory, the rest
// waits in the file for the next batches.

/** Most bytes one read takes from the file (one read per batch closed). */
export const MARKS_READ_BYTES = 1 << 20;
/** A mark dated this far after the moment it was read was not written then: its line lies (and would cost the batch its samples). */
export const MARK_FUTURE_SLACK_MS = 60_000;
/** How long before the agent started a mark may be dated when the agent is the node's first (the workload starts after it; clocks differ a little). */
export const MARK_EARLY_SLACK_MS = 10 * 60_000;
/** The earliest time any mark may carry: a line dated before it is a writer's bug. */
export const MARK_EARLIEST_MS = Date.UTC(2000, 0, 1);
/** Bytes of the file the agent reads at most: MAX_NODE_MARKS lines of the longest length, newlines included. */
export const MAX_MARKS_FILE_BYTES = MAX_NODE_MARKS * (MAX_MARK_LINE_BYTES + 1);

/**
 * The agent's sample timeline for marks: samples are stamped nowMs() (clock.ts), which moves
 * with the monotonic clock from a wall-clock origin. One reading of both clocks at start maps a
 * line's mono_ns (CLOCK_MONOTONIC, which process.hrtime reads on Linux) onto it, immune to clock
 * steps; a line without mono_ns (the shell writer) keeps its wall time.
 */
export class MarkTimeline {
  constructor(
    /** nowMs() at the reading. */
    readonly wallMs: number,
    /** process.hrtime.bigint() at the same moment. */
    readonly monoNs: bigint,
  ) {}

  /** Both clocks, read now (the monotonic one on either side of the wall reading, averaged). */
  static now(): MarkTimeline {
    const before = process.hrtime.bigint();
    const wall = nowMs();
    const after = process.hrtime.bigint();
    return new MarkTimeline(wall, (before + after) / 2n);
  }

  /** A line's time on the timeline (Unix ms, whole µs), and which clock it came from. */
  place(line: MarkLine): { t: number; clock: 'mono' | 'wall' } {
    // Whole µs in bigint first: ns since the epoch do not fit a double exactly.
    if (line.monoNs !== null) return { t: roundToMicros(this.wallMs + Number((line.monoNs - this.monoNs) / 1000n) / 1000), clock: 'mono' };
    return { t: Number(line.wallNs / 1000n) / 1000, clock: 'wall' };
  }
}

export interface MarksTailOptions {
  /** Most bytes one read takes. Default MARKS_READ_BYTES. */
  readBytes?: number;
  /** Most marks held for one batch; reading pauses there. Default MAX_BATCH_MARKS. */
  batchMarks?: number;
  /** Most marks read from the file; past them reading stops. Default MAX_NODE_MARKS. */
  maxMarks?: number;
  /** Earliest time a mark may carry (Unix ms); earlier ones are bad lines. Default MARK_EARLIEST_MS. */
  earliestMs?: number;
  /** The clock marks' plausibility is judged by. Default nowMs. */
  now?: () => number;
}

/** What the tail did, for `.stats.json`. */
export interface MarksTailStats {
  /** Marks put into spooled batches. */
  sent: number;
  /** Lines skipped: not a version-1 mark, longer than MAX_MARK_LINE_BYTES, or dated implausibly. */
  badLines: number;
  /** Marks read but never spooled (left when the agent stopped). */
  dropped: number;
  /** Whether reading stopped at the node's limit (MAX_NODE_MARKS marks, or MAX_MARKS_FILE_BYTES). */
  capped: boolean;
}

const EMPTY = Buffer.alloc(0);

/**
 * Tails one `<node>.marks`: poll() reads what was appended (at most `readBytes`, and only while
 * fewer than `batchMarks` marks wait), `pending` are the marks for the next batch, `sent(n)` says
 * the first n of them were spooled. A missing file is no marks; I/O errors are logged and retried
 * at the next poll, never thrown.
 */
export class MarksTail {
  private fd: number | null = null;
  /** The open file's inode: a file replaced by another is read anew from its start. */
  private ino = 0;
  private buf: Buffer = EMPTY;
  /** File offset of the next byte to read. */
  private pos = 0;
  /** File offset where the line being read begins. */
  private lineStart = 0;
  /** The bytes of that line read so far (it has no newline yet). */
  private partial: Buffer = EMPTY;
  /** In a line already longer than MAX_MARK_LINE_BYTES (counted bad): its bytes are passed over up to its newline. */
  private skipping = false;
  private readonly queue: BatchMark[] = [];
  private readCount = 0;
  /** Reading stopped for good: the node's limit was reached. */
  private stopped = false;
  private readonly readBytes: number;
  private readonly batchMarks: number;
  private readonly maxMarks: number;
  private readonly earliestMs: number;
  private readonly now: () => number;
  private readonly counters = { sent: 0, badLines: 0 };

  constructor(
    private readonly file: string,
    private readonly timeline: MarkTimeline,
    private readonly log: Logger,
    options: MarksTailOptions = {},
  ) {
    this.readBytes = options.readBytes ?? MARKS_READ_BYTES;
    this.batchMarks = options.batchMarks ?? MAX_BATCH_MARKS;
    this.maxMarks = options.maxMarks ?? MAX_NODE_MARKS;
    this.earliestMs = options.earliestMs ?? MARK_EARLIEST_MS;
    this.now = options.now ?? nowMs;
  }

  /** The marks read and not yet spooled, in file order: at most `batchMarks`. */
  get pending(): readonly BatchMark[] {
    return this.queue;
  }

  /** The first `n` pending marks went into a spooled batch. */
  sent(n: number): void {
    this.queue.splice(0, n);
    this.counters.sent += n;
  }

  stats(): MarksTailStats {
    return { sent: this.counters.sent, badLines: this.counters.badLines, dropped: this.queue.length, capped: this.stopped };
  }

  /** Reads once what was appended since the last poll (bounded); true when it read anything. */
  poll(): boolean {
    if (this.stopped || this.queue.length >= this.batchMarks) return false;
    try {
      const size = this.open();
      if (size === null || size <= this.pos) return false;
      const n = fs.readSync(this.fd as number, this.buf, 0, Math.min(this.buf.length, size - this.pos), this.pos);
      if (n <= 0) return false;
      this.consume(this.buf.subarray(0, n));
      return true;
    } catch (err) {
      this.log.warnOnce(`marks:${errorMessage(err)}`, 'marks file unreadable; retried at the next batch', { file: this.file, error: errorMessage(err) });
      this.close();
      return false;
    }
  }

  /**
   * Reads the file up to its end as it is now, or until a batch's worth of marks waits; true when
   * nothing is left to read (every complete line written until now is pending or sent). False:
   * spool the pending marks and call again.
   */
  fill(): boolean {
    while (this.poll());
    return this.caughtUp();
  }

  /** Whether nothing is left to read (up to the file's size now, or reading stopped for good). */
  private caughtUp(): boolean {
    if (this.stopped || this.fd === null) return true;
    try {
      return fs.fstatSync(this.fd).size <= this.pos;
    } catch {
      return true;
    }
  }

  close(): void {
    if (this.fd === null) return;
    try {
      fs.closeSync(this.fd);
    } catch {
      // Already gone; nothing to release.
    }
    this.fd = null;
  }

  /** Opens the file if need be; its size, or null when there is none. A file truncated or replaced is read again from 0. */
  private open(): number | null {
    let st: fs.Stats;
    try {
      st = fs.statSync(this.file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null; // no marks (yet): normal
      throw err;
    }
    if (this.fd !== null && (st.ino !== this.ino || st.size < this.pos)) {
      // Offsets already sent now name other lines; ingest keeps the first copy of each offset.
      this.log.warnOnce('marks:rewritten', 'marks file truncated or replaced; reading it again from its start', { file: this.file });
      this.close();
      this.pos = 0;
      this.lineStart = 0;
      this.partial = EMPTY;
      this.skipping = false;
    }
    if (this.fd === null) {
      this.fd = fs.openSync(this.file, 'r');
      this.ino = fs.fstatSync(this.fd).ino;
      if (this.buf.length === 0) this.buf = Buffer.allocUnsafe(this.readBytes);
    }
    if (this.pos >= MAX_MARKS_FILE_BYTES) {
      this.stop(`${MAX_MARKS_FILE_BYTES} bytes read (MAX_MARKS_FILE_BYTES)`);
      return null;
    }
    return Math.min(fs.fstatSync(this.fd).size, MAX_MARKS_FILE_BYTES);
  }

  /** Takes the complete lines of `chunk` (the bytes at `pos`); stops after the line that fills the batch, the rest read again later. */
  private consume(chunk: Buffer): void {
    const base = this.pos;
    let from = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, from)) {
      const piece = chunk.subarray(from, nl);
      from = nl + 1;
      if (this.skipping) this.skipping = false;
      else this.line(this.partial.length > 0 ? Buffer.concat([this.partial, piece]) : piece, this.lineStart);
      this.partial = EMPTY;
      this.lineStart = base + from;
      if (this.stopped || this.queue.length >= this.batchMarks) {
        this.pos = this.lineStart;
        return;
      }
    }
    this.pos = base + chunk.length;
    const rest = chunk.subarray(from);
    if (this.skipping || rest.length === 0) return;
    if (this.partial.length + rest.length > MAX_MARK_LINE_BYTES) {
      this.bad(this.lineStart, 'longer than MAX_MARK_LINE_BYTES');
      this.skipping = true;
      this.partial = EMPTY;
    } else {
      // A copy: the read buffer is reused.
      this.partial = Buffer.concat([this.partial, rest]);
    }
  }

  private line(bytes: Buffer, offset: number): void {
    if (bytes.length > MAX_MARK_LINE_BYTES) return this.bad(offset, 'longer than MAX_MARK_LINE_BYTES');
    const parsed = parseMarkLine(bytes.toString('utf8'));
    if (parsed === null) return this.bad(offset, 'not a mark');
    const { t, clock } = this.timeline.place(parsed);
    // A batch with a mark outside its run is refused whole, samples and all: a lying line goes alone.
    if (!Number.isFinite(t) || t < this.earliestMs || t > this.now() + MARK_FUTURE_SLACK_MS) return this.bad(offset, 'dated implausibly');
    this.queue.push({ offset, kind: parsed.kind, name: parsed.name, t, clock, writer: parsed.writer });
    this.readCount += 1;
    if (this.readCount >= this.maxMarks) this.stop(`${this.maxMarks} marks read (MAX_NODE_MARKS)`);
  }

  private bad(offset: number, why: string): void {
    this.counters.badLines += 1;
    this.log.warnOnce(`marks:bad:${why}`, 'marks file: line skipped', { file: this.file, offset, why });
  }

  private stop(why: string): void {
    if (this.stopped) return;
    this.stopped = true;
    this.log.warn('marks file: reading stopped; later marks of this node are not kept', { file: this.file, why });
    this.close();
  }
}
