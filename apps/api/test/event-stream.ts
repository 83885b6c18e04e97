import { waitFor } from '@erg/testkit';

export interface SseEvent {
  id?: string;
  event: string;
  data: any;
}

export interface EventStream {
  /** The response that carries the stream (status, headers). */
  readonly res: Response;
  readonly events: SseEvent[];
  /** True once the response ended or the stream was closed. */
  readonly ended: boolean;
  /** Waits (with a deadline) for an event that satisfies `pred`. */
  next(pred: (e: SseEvent) => boolean, what: string, timeoutMs?: number): Promise<SseEvent>;
  close(): Promise<void>;
}

/** GET of an event stream read with fetch (as the web app does), its events collected as they come. */
export async function readEventStream(url: string, token: string): Promise<EventStream> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  const events: SseEvent[] = [];
  let ended = false;
  const reading = (async () => {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const e = parseFrame(buffer.slice(0, at));
          buffer = buffer.slice(at + 2);
          if (e) events.push(e);
        }
      }
    } catch {
      // aborted, or the server went away: `ended` says so
    }
    ended = true;
  })();
  return {
    res,
    events,
    get ended() {
      return ended;
    },
    next: (pred, what, timeoutMs = 10_000) => waitFor(() => events.find(pred), { timeoutMs, intervalMs: 20, what }),
    async close() {
      controller.abort();
      await reading;
    },
  };
}

/** One SSE frame (`id:`, `event:`, `data:` lines; comments skipped) → the event, or null for a comment-only frame. */
function parseFrame(frame: string): SseEvent | null {
  const e: Partial<SseEvent> = {};
  for (const line of frame.split('\n')) {
    if (line.startsWith(':')) continue;
    const [field, ...rest] = line.split(': ');
    const v = rest.join(': ');
    if (field === 'id') e.id = v;
    if (field === 'event') e.event = v;
    if (field === 'data') e.data = JSON.parse(v);
  }
  return e.event ? (e as SseEvent) : null;
}
