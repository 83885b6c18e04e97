import type { BatchMark } from '@erg/spec/marks';
import { errorMessage, type Logger } from './log';
import type { Pusher } from './push';
import type { SampleStore } from './samples';
import type { Spool } from './spool';

/** Where a batch's phase marks come from (marks-tail.ts's MarksTail). */
export interface MarkSource {
  /** The marks for the next batch, in file order (at most MAX_BATCH_MARKS). */
  readonly pending: readonly BatchMark[];
  /** The first `n` of them are in a spooled batch. */
  sent(n: number): void;
}

/** The batch member for `marks`: `,"marks":[…]`, or '' when there are none. */
export function marksMember(marks: readonly BatchMark[]): string {
  return marks.length === 0 ? '' : `,"marks":${JSON.stringify(marks)}`;
}

/** Closes the store's current batch, with the marks read since the last one: onto the spool first (durable), then to the pusher. */
export class BatchCloser {
  /** Seq of the next batch: the spool's next one, so seqs continue across agent processes. */
  private seq: number;
  /** Seq of this process's first batch. */
  readonly firstSeq: number;
  /** Batches this process spooled. */
  spooled = 0;
  /** Batches lost because the spool could not be written. */
  spoolErrors = 0;
  /** Store version the last spooled batch described; the first batch of a process, and any after the sensor set changed, carry `sensors`. */
  private sentVersion = -1;
  /** Whether the node's fingerprint and power record still have to be spooled: they go with the process's first batch that carries `sensors`. */
  private nodeInfoPending = true;

  constructor(
    private readonly node: string,
    private readonly store: SampleStore,
    private readonly spool: Spool,
    private readonly pusher: Pusher | undefined,
    private readonly log: Logger,
    /** `,"fingerprint":{…}[,"power":{…}]`: JSON members for that batch. */
    private readonly nodeInfo: string,
    /** The workload's phase marks; none without it. */
    private readonly marks?: MarkSource,
  ) {
    this.seq = spool.recovery.nextSeq;
    this.firstSeq = this.seq;
  }

  /** Seq the next batch will take. */
  get nextSeq(): number {
    return this.seq;
  }

  /**
   * Spools and queues the samples collected since the last batch and the pending marks; nothing
   * when there are no samples (a batch carries samples: the marks wait for the next). Returns
   * whether a batch was spooled.
   */
  close(): boolean {
    if (this.store.pendingSamples === 0) return false;
    const withSensors = this.store.version !== this.sentVersion;
    const marks = this.marks?.pending ?? [];
    const line = this.store.takeBatch(this.node, this.seq, withSensors, withSensors && this.nodeInfoPending ? this.nodeInfo : '', marksMember(marks));
    if (line === null) return false;
    // The batch is on disk (appended; fsync'd within a second) before it is ever sent.
    let spooled;
    try {
      spooled = this.spool.append(this.seq, line);
    } catch (err) {
      // Disk full or gone: this batch is lost (and said so); sampling goes on and the next batch
      // takes the same seq, so the spool stays gap-free. Its marks stay pending: the next batch carries them.
      this.spoolErrors += 1;
      this.log.error('spool append failed; batch lost', { seq: this.seq, error: errorMessage(err) });
      return false;
    }
    this.sentVersion = this.store.version;
    if (withSensors) this.nodeInfoPending = false;
    if (marks.length > 0) this.marks?.sent(marks.length);
    this.seq += 1;
    this.spooled += 1;
    this.pusher?.enqueue(spooled);
    return true;
  }
}
