/**
 * redactSecrets for text that arrives as a stream (GET /v1/runs/{id}/logs sends a log as it reads
 * it, never holding it whole).
 */
import { StringDecoder } from 'node:string_decoder';
import { KEY_HEADER_LINE, redactSecrets } from './redact';

/** Redaction works on whole lines; this much without a place to cut is redacted as it is. */
const MAX_PENDING_BYTES = 1024 * 1024;

/**
 * redactSecrets over a stream. Bytes are cut into segments, each redacted on its own, and a
 * segment ends only where a line starts that is not indented or blank: a token or `password=…`
 * is never split, nor is a YAML value that goes on over indented lines. A private key block can
 * be longer than a segment: redactSecrets removes a block cut at either end of a segment, and
 * this class remembers that a segment ended inside one, so that what follows is dropped up to the
 * block's end line. Without a place to cut within MAX_PENDING_BYTES, the bytes are cut as they are.
 */
export class StreamingRedactor {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private readonly decoder = new StringDecoder('utf8');
  private insideKeyBlock = false;
  private readonly segmentBytes: number;

  /** `segmentBytes`: about how much is gathered before it is redacted (tests make it small). */
  constructor(options: { segmentBytes?: number } = {}) {
    this.segmentBytes = options.segmentBytes ?? 64 * 1024;
  }

  /** Takes the next bytes; returns the redacted text that is ready. */
  push(chunk: Buffer): string[] {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes < this.segmentBytes) return [];
    const all = Buffer.concat(this.pending);
    const cut = cutPoint(all);
    this.pending = [all.subarray(cut)];
    this.pendingBytes = all.length - cut;
    return cut === 0 ? [] : [this.redact(this.decoder.write(all.subarray(0, cut)))];
  }

  /** The rest, redacted. */
  end(): string[] {
    const rest = this.decoder.write(Buffer.concat(this.pending)) + this.decoder.end();
    this.pending = [];
    this.pendingBytes = 0;
    return rest === '' ? [] : [this.redact(rest)];
  }

  private redact(segment: string): string {
    let text = segment;
    if (this.insideKeyBlock) {
      const end = afterFirstEndHeader(text);
      if (end === null) return ''; // all of it inside the block, already shown as [redacted]
      text = text.slice(end);
      this.insideKeyBlock = false;
    }
    // The state after this segment is that of its last key header line.
    let last: string | null = null;
    for (const m of text.matchAll(KEY_HEADER_LINE)) last = m[1]!;
    this.insideKeyBlock = last === 'BEGIN';
    if (this.insideKeyBlock) return redactSecrets(text); // the block, and so [redacted], runs to the end
    // A segment ends where the next line starts, so its final line ends are not part of any value:
    // kept out of redaction (a YAML-like `token: …` on the last line would take them along).
    const body = text.replace(/\n+$/, '');
    return redactSecrets(body) + text.slice(body.length);
  }
}

/**
 * Where to end a segment of `bytes`: at the start of the last line that begins with something
 * other than a space, a tab or a line end (so whatever goes on over indented lines stays whole);
 * 0 when there is none yet, or all of it past MAX_PENDING_BYTES.
 */
function cutPoint(bytes: Buffer): number {
  for (let newline = bytes.lastIndexOf(10, bytes.length - 2); newline >= 0; newline = newline > 0 ? bytes.lastIndexOf(10, newline - 1) : -1) {
    const next = bytes[newline + 1];
    if (next !== 0x20 && next !== 0x09 && next !== 0x0a && next !== 0x0d) return newline + 1;
  }
  return bytes.length >= MAX_PENDING_BYTES ? bytes.length : 0;
}

/** The index just past the first END header line in `text`, or null. */
function afterFirstEndHeader(text: string): number | null {
  for (const m of text.matchAll(KEY_HEADER_LINE)) if (m[1] === 'END') return m.index + m[0].length;
  return null;
}
