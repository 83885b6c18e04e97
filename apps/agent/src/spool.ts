import fs from 'node:fs';
import { ackedText, parseAcked, SPOOL_LINE_HEAD_BYTES, spoolLineSeq } from '@erg/spec/run-dir';
import { writeFileAtomic } from './files';
import type { Logger } from './log';

// The durable record of every batch: `<node>.spool`, one JSON line per batch, appended before
// the batch is sent and fsync'd at least once a second. `<node>.acked` holds the highest seq
// such that every seq ≤ it is settled (acknowledged, or rejected by the server and never to be
// resent); it is rewritten atomically.

/** Where one spooled batch lies in the spool file. */
export interface SpooledBatch {
  seq: number;
  /** Byte offset of the line and its length without the newline. */
  pos: number;
  len: number;
}

export interface SpoolRecovery {
  /** Seq for the next batch (0 for a new spool). */
  nextSeq: number;
  /** Highest settled seq read from `.acked` (-1 if none). */
  ackedSeq: number;
  /** Spooled batches above `ackedSeq`, in file order: to be (re)sent. */
  unacked: SpooledBatch[];
  /** Batches found in an existing spool. */
  existing: number;
  /** Bytes of a torn last line cut off (a crash mid-write). */
  truncatedBytes: number;
}

const FSYNC_EVERY_MS = 1000;

export class Spool {
  private readonly fd: number;
  private size: number;
  private dirty = false;
  private lastSyncAt = 0;
  private ackedWritten: number;
  readonly recovery: SpoolRecovery;
  fsyncs = 0;

  constructor(
    private readonly file: string,
    private readonly ackedFile: string,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    // a+: appends always go to the end (O_APPEND), and pread can fetch any line to resend it.
    this.fd = fs.openSync(file, 'a+');
    this.size = fs.fstatSync(this.fd).size;
    this.recovery = this.recover();
    this.ackedWritten = this.recovery.ackedSeq;
  }

  /** Indexes an existing spool: cuts a torn tail, finds the last seq and the unacknowledged lines. */
  private recover(): SpoolRecovery {
    const ackedSeq = readAcked(this.ackedFile);
    const lines: SpooledBatch[] = [];
    const chunk = Buffer.allocUnsafe(1 << 20);
    const head = Buffer.allocUnsafe(SPOOL_LINE_HEAD_BYTES);
    let lineStart = 0;
    for (let pos = 0; pos < this.size; ) {
      const n = fs.readSync(this.fd, chunk, 0, Math.min(chunk.length, this.size - pos), pos);
      if (n <= 0) break;
      for (let i = chunk.indexOf(10); i >= 0 && i < n; i = chunk.indexOf(10, i + 1)) {
        const end = pos + i;
        lines.push({ seq: -1, pos: lineStart, len: end - lineStart });
        lineStart = end + 1;
      }
      pos += n;
    }
    let truncatedBytes = 0;
    // A last line without its newline was cut short by a crash; so may be a last line that does not parse.
    const last = lines[lines.length - 1];
    if (last && !isJson(this.readLine(last))) {
      lines.pop();
      lineStart = last.pos;
    }
    if (lineStart < this.size) {
      truncatedBytes = this.size - lineStart;
      fs.ftruncateSync(this.fd, lineStart);
      fs.fsyncSync(this.fd);
      this.size = lineStart;
      this.log.warn('spool: torn last line cut off', { file: this.file, bytes: truncatedBytes });
    }
    let maxSeq = -1;
    const unacked: SpooledBatch[] = [];
    for (const line of lines) {
      const n = fs.readSync(this.fd, head, 0, Math.min(head.length, line.len), line.pos);
      const seq = spoolLineSeq(head.toString('utf8', 0, n));
      if (seq === null) {
        this.log.warn('spool: line without a seq skipped', { file: this.file, pos: line.pos });
        continue;
      }
      line.seq = seq;
      maxSeq = Math.max(maxSeq, line.seq);
      if (line.seq > ackedSeq) unacked.push(line);
    }
    return { nextSeq: maxSeq + 1, ackedSeq, unacked, existing: lines.length, truncatedBytes };
  }

  /** Appends one batch line (one write call, so a crash cannot interleave it); fsyncs if a second has passed. */
  append(seq: number, line: string): SpooledBatch {
    const data = `${line}\n`;
    const bytes = Buffer.byteLength(data);
    fs.writeSync(this.fd, data);
    const batch = { seq, pos: this.size, len: bytes - 1 };
    this.size += bytes;
    this.dirty = true;
    this.syncIfDue();
    return batch;
  }

  /** The bytes of a spooled line (for sending). */
  readLine(batch: SpooledBatch): Buffer {
    const buf = Buffer.allocUnsafe(batch.len);
    let got = 0;
    while (got < batch.len) {
      const n = fs.readSync(this.fd, buf, got, batch.len - got, batch.pos + got);
      if (n <= 0) throw new Error(`spool ${this.file}: short read at ${batch.pos}`);
      got += n;
    }
    return buf;
  }

  syncIfDue(): void {
    if (this.dirty && this.now() - this.lastSyncAt >= FSYNC_EVERY_MS) this.sync();
  }

  sync(): void {
    if (!this.dirty) return;
    fs.fsyncSync(this.fd);
    this.dirty = false;
    this.lastSyncAt = this.now();
    this.fsyncs += 1;
  }

  /** Rewrites `.acked` (atomically) when the settled seq moved. */
  writeAcked(seq: number): void {
    if (seq <= this.ackedWritten) return;
    writeFileAtomic(this.ackedFile, ackedText(seq));
    this.ackedWritten = seq;
  }

  get bytes(): number {
    return this.size;
  }

  close(): void {
    this.sync();
    fs.closeSync(this.fd);
  }
}

export function readAcked(file: string): number {
  try {
    return parseAcked(fs.readFileSync(file, 'utf8'));
  } catch {
    return -1;
  }
}

function isJson(buf: Buffer): boolean {
  try {
    JSON.parse(buf.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}
