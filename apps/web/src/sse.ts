// A parser for Server-Sent Events as the WHATWG spec defines the stream: lines ending in LF, CR or
// CRLF; `field: value` (one optional space after the colon); `data` lines joined by LF; a blank
// line dispatches; lines starting with ':' are comments (keepalives). The UI reads /v1/events with
// fetch (to send the bearer token, which EventSource cannot) and feeds the chunks through this.

export interface SseMessage {
  /** `message` when the block had no `event:` line. */
  event: string;
  data: string;
  /** The last event id seen so far in the stream (it persists across messages, as in the spec). */
  id: string | null;
  retry: number | null;
}

export class SseParser {
  private buffer = '';
  private afterCr = false;
  private event = '';
  private data: string[] = [];
  private hasData = false;
  private retry: number | null = null;
  /** The last `id:` seen; send it as Last-Event-ID when reconnecting. */
  lastEventId: string | null = null;
  /** Comment lines seen (keepalives), for liveness checks. */
  comments = 0;

  /** Feeds a decoded chunk; returns the messages it completed. */
  push(chunk: string): SseMessage[] {
    // A CR that ended the previous chunk may be the first half of a CRLF: drop the LF half.
    if (this.afterCr && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.afterCr = false;
    this.buffer += chunk;
    const out: SseMessage[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (!m) break;
      if (m[0] === '\r' && m.index === this.buffer.length - 1) this.afterCr = true;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      const message = this.line(line);
      if (message) out.push(message);
    }
    return out;
  }

  private line(line: string): SseMessage | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) { this.comments++; return null; }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event': this.event = value; break;
      case 'data': this.data.push(value); this.hasData = true; break;
      case 'id': if (!value.includes('\0')) this.lastEventId = value; break;
      case 'retry': if (/^\d+$/.test(value)) this.retry = Number(value); break;
      default: break; // unknown fields are ignored
    }
    return null;
  }

  private dispatch(): SseMessage | null {
    const message: SseMessage | null = this.hasData
      ? { event: this.event || 'message', data: this.data.join('\n'), id: this.lastEventId, retry: this.retry }
      : null;
    this.event = '';
    this.data = [];
    this.hasData = false;
    return message;
  }
}
