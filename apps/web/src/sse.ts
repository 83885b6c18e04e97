// Server-Sent Events as the WHATWG spec defines the stream, parsed by eventsource-parser (line
// ends, `field: value`, multi-line data, comments, retry). The UI reads /v1/events with fetch (to
// send the bearer token, which EventSource cannot) and feeds the chunks through this adapter,
// which adds what the page needs on top: the browser's default event name, the last event id
// carried across messages, and a count of keepalive comments for liveness checks.
import { createParser, type EventSourceParser } from 'eventsource-parser';

export interface SseMessage {
  /** `message` when the block had no `event:` line. */
  event: string;
  data: string;
  /** The last event id seen so far in the stream (it persists across messages, as in the spec). */
  id: string | null;
  retry: number | null;
}

export class SseParser {
  private readonly parser: EventSourceParser;
  private retry: number | null = null;
  private completed: SseMessage[] = [];
  /** The last `id:` seen; send it as Last-Event-ID when reconnecting. */
  lastEventId: string | null = null;
  /** Comment lines seen (keepalives), for liveness checks. */
  comments = 0;

  constructor() {
    this.parser = createParser({
      onEvent: (message) => {
        if (message.id !== undefined) this.lastEventId = message.id;
        this.completed.push({ event: message.event || 'message', data: message.data, id: this.lastEventId, retry: this.retry });
      },
      onRetry: (ms) => {
        this.retry = ms;
      },
      onComment: () => {
        this.comments++;
      },
      // Unknown fields and malformed retry values are ignored, as the spec says.
      onError: () => undefined,
    });
  }

  /** Feeds a decoded chunk; returns the messages it completed. */
  push(chunk: string): SseMessage[] {
    this.parser.feed(chunk);
    const out = this.completed;
    this.completed = [];
    return out;
  }
}
