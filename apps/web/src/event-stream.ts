// The live connection to GET /v1/events: fetch with the bearer token, a stream reader through
// SseParser, and reconnection with backoff whenever the stream ends or fails (an API restart).
// After every reconnect it reports `resync` so that pages refetch what they show: events sent
// while the stream was down are not replayed.
import { Backoff, type BackoffOptions } from '@erg/backoff';
import { SseParser, type SseMessage } from './sse';
import type { ErgEvent } from './types';

/**
 * Reconnect delays: 500 ms doubling to 15 s, with the default (equal) jitter so that the browsers
 * left open on erg do not all reconnect at the same moment after an API restart.
 */
export const EVENT_STREAM_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 15_000 };

export type StreamStatus = 'connecting' | 'open' | 'reconnecting' | 'unauthorized' | 'closed';

export interface EventStreamOptions {
  /** e.g. `/v1/events?campaign=<id>`; relative to the page unless `baseUrl` is given. */
  url: string;
  token: string;
  onEvent: (event: ErgEvent) => void;
  onStatus?: (status: StreamStatus) => void;
  /** Called after a reconnect (not after the first connect): refetch what is on screen. */
  onResync?: () => void;
  /** What is not given comes from EVENT_STREAM_BACKOFF. */
  backoff?: Partial<BackoffOptions>;
  fetch?: typeof fetch;
  /** No byte for this long (keepalives included) counts as a dead connection. */
  idleTimeoutMs?: number;
}

/** An ErgEvent from a parsed message; null for unknown event types or data that is not JSON. */
export function toErgEvent(message: SseMessage): ErgEvent | null {
  if (message.event !== 'hello' && message.event !== 'run' && message.event !== 'power') return null;
  try {
    return { type: message.event, id: message.id, data: JSON.parse(message.data) } as ErgEvent;
  } catch {
    return null;
  }
}

/** Opens the stream and keeps it open until `close()`. */
export function openEventStream(options: EventStreamOptions): { close: () => void } {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const backoff = new Backoff({ ...EVENT_STREAM_BACKOFF, ...options.backoff });
  const idleTimeoutMs = options.idleTimeoutMs ?? 45_000;
  let closed = false;
  let controller: AbortController | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let connectedOnce = false;
  const status = (s: StreamStatus) => options.onStatus?.(s);

  async function connect(): Promise<void> {
    if (closed) return;
    controller = new AbortController();
    const ctl = controller;
    let idle: ReturnType<typeof setTimeout> | null = null;
    const touch = () => {
      if (idle) clearTimeout(idle);
      idle = setTimeout(() => ctl.abort(), idleTimeoutMs);
    };
    try {
      touch();
      const res = await doFetch(options.url, { headers: { authorization: `Bearer ${options.token}`, accept: 'text/event-stream' }, signal: ctl.signal });
      if (res.status === 401) {
        status('unauthorized');
        closed = true;
        return;
      }
      if (!res.ok || !res.body) throw new Error(`events: HTTP ${res.status}`);
      status('open');
      if (connectedOnce) options.onResync?.();
      connectedOnce = true;
      const parser = new SseParser();
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let sawData = false;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        touch();
        if (!sawData) { sawData = true; backoff.succeeded(); }
        for (const m of parser.push(decoder.decode(value, { stream: true }))) {
          const e = toErgEvent(m);
          if (e) options.onEvent(e);
        }
      }
    } catch {
      // fall through to the reconnect below
    } finally {
      if (idle) clearTimeout(idle);
    }
    if (closed) return;
    status('reconnecting');
    timer = setTimeout(() => { timer = null; void connect(); }, backoff.next());
  }

  status('connecting');
  void connect();
  return {
    close: () => {
      closed = true;
      if (timer) clearTimeout(timer);
      controller?.abort();
      status('closed');
    },
  };
}
