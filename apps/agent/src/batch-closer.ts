import { errorMessage, type Logger } from './log';
import type { Pusher } from './push';
import type { SampleStore } from './samples';
import type { Spool } from './spool';

/** Closes the store's current batch: onto the spool first (durable), then to the pusher. */
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
  ) {
    this.seq = spool.recovery.nextSeq;
    this.firstSeq = this.seq;
  }

  /** Seq the next batch will take. */
  get nextSeq(): number {
    return this.seq;
  }

  /** Spools and queues the samples collected since the last batch; nothing when there are none. */
  close(): void {
    const withSensors = this.store.version !== this.sentVersion;
    const line = this.store.takeBatch(this.node, this.seq, withSensors, withSensors && this.nodeInfoPending ? this.nodeInfo : '');
    if (line === null) return;
    // The batch is on disk (appended; fsync'd within a second) before it is ever sent.
    let spooled;
    try {
      spooled = this.spool.append(this.seq, line);
    } catch (err) {
      // Disk full or gone: this batch is lost (and said so); sampling goes on and the next batch
      // takes the same seq, so the spool stays gap-free.
      this.spoolErrors += 1;
      this.log.error('spool append failed; batch lost', { seq: this.seq, error: errorMessage(err) });
      return;
    }
    this.sentVersion = this.store.version;
    if (withSensors) this.nodeInfoPending = false;
    this.seq += 1;
    this.spooled += 1;
    this.pusher?.enqueue(spooled);
  }
}
