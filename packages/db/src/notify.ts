import { Backoff } from '@erg/backoff';
import pg from 'pg';
import { poolOf, type Database } from './client';

/**
 * Postgres LISTEN/NOTIFY on the `erg_events` channel: run state changes (a trigger on run_events
 * notifies for every row, whoever writes it), live power (the API's telemetry ingest) and notices
 * that someone's access changed (a token revoked, a user deactivated or removed from a project).
 */

export const EVENTS_CHANNEL = 'erg_events';
/** NOTIFY refuses payloads of 8000 bytes or more; ours are ids, states and numbers. */
const MAX_PAYLOAD_BYTES = 7900;
/** application_name of the listening connection: how an operator (or a test) finds it in pg_stat_activity. */
export const EVENTS_LISTENER_NAME = 'erg-events-listener';

/** Publishes one event on the channel; delivered to listeners when the surrounding transaction (if any) commits. */
export async function notifyEvent(db: Database, event: Record<string, unknown>): Promise<void> {
  const payload = JSON.stringify(event);
  if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) throw new Error(`event payload of ${Buffer.byteLength(payload)} bytes is over NOTIFY's limit`);
  await poolOf(db).query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, payload]);
}

export interface EventListenerOptions {
  url: string;
  /** Called with each payload, parsed as JSON; payloads that are not JSON are dropped. */
  onEvent: (payload: unknown) => void;
  /** Called each time LISTEN is (re)established, and each time the connection is lost. */
  onState?: (state: 'listening' | 'lost', err?: Error) => void;
  /** First reconnect delay, doubled per failed attempt up to maxBackoffMs. Default 250 ms / 5 s. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /**
   * How often the idle connection is asked a `SELECT 1` (default 30 s). A connection that went
   * silent without closing (its host vanished, a firewall dropped the flow) delivers neither
   * notifications nor an error; only a question that goes unanswered reveals it.
   */
  heartbeatMs?: number;
  /** How long connecting, LISTEN and each heartbeat may take before the connection counts as lost (default 10 s). */
  answerTimeoutMs?: number;
}

export interface EventListener {
  /** True while LISTEN is active. */
  readonly listening: boolean;
  /** Resolves true once LISTEN is active, or false after `timeoutMs`. */
  whenListening(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * One dedicated connection (not from the pool: a pooled client would be handed to other queries
 * and LISTEN would be lost with it) that LISTENs on the channel, and reconnects with backoff
 * whenever the connection drops (Postgres restarted, backend terminated) or stops answering its
 * heartbeat (a silent network). Events sent while it is
 * disconnected are lost: consumers treat the stream as hints and re-read state they need exact.
 */
export function listenForEvents(opts: EventListenerOptions): EventListener {
  // No jitter, as before: one listener per API process, and its reconnects wait for Postgres.
  const reconnect = new Backoff({ initialMs: opts.minBackoffMs ?? 250, maxMs: opts.maxBackoffMs ?? 5000, jitter: 0 });
  const heartbeatMs = opts.heartbeatMs ?? 30_000;
  const answerTimeoutMs = opts.answerTimeoutMs ?? 10_000;
  let heartbeat: NodeJS.Timeout | null = null;
  let client: pg.Client | null = null;
  let listening = false;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;
  let waiters: Array<() => void> = [];

  const setListening = (value: boolean) => {
    listening = value;
    if (value) {
      const w = waiters;
      waiters = [];
      for (const resolve of w) resolve();
    }
  };

  const scheduleReconnect = (err?: Error) => {
    if (closed || timer) return;
    if (listening) opts.onState?.('lost', err);
    setListening(false);
    stopHeartbeat();
    const old = client;
    client = null;
    old?.removeAllListeners('notification');
    old?.end().catch(() => undefined);
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, reconnect.next());
  };

  function stopHeartbeat(): void {
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = null;
  }

  function startHeartbeat(c: pg.Client): void {
    stopHeartbeat();
    heartbeat = setInterval(() => {
      c.query({ text: 'SELECT 1', query_timeout: answerTimeoutMs } as pg.QueryConfig).catch((err: Error) => {
        if (client === c) scheduleReconnect(new Error(`the LISTEN connection did not answer a heartbeat: ${err.message}`));
      });
    }, heartbeatMs);
    heartbeat.unref();
  }

  async function connect(): Promise<void> {
    if (closed) return;
    const c = new pg.Client({
      connectionString: opts.url, application_name: EVENTS_LISTENER_NAME,
      // A connect or LISTEN that hangs (the same silent network) must fail, so the backoff goes on.
      connectionTimeoutMillis: answerTimeoutMs, query_timeout: answerTimeoutMs,
      // The kernel's probes as well, for a connection that stays silent between heartbeats.
      keepAlive: true, keepAliveInitialDelayMillis: heartbeatMs,
    });
    client = c;
    // A dropped connection emits 'error' (when a query or the socket fails) and/or 'end'.
    c.on('error', (err) => { if (client === c) scheduleReconnect(err); });
    c.on('end', () => { if (client === c) scheduleReconnect(); });
    c.on('notification', (msg) => {
      if (msg.channel !== EVENTS_CHANNEL || msg.payload === undefined) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(msg.payload);
      } catch {
        return;
      }
      opts.onEvent(parsed);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${EVENTS_CHANNEL}`);
      if (closed || client !== c) {
        await c.end().catch(() => undefined);
        return;
      }
      reconnect.succeeded();
      setListening(true);
      startHeartbeat(c);
      opts.onState?.('listening');
    } catch (err) {
      if (client === c) scheduleReconnect(err as Error);
    }
  }

  void connect();

  return {
    get listening() {
      return listening;
    },
    whenListening(timeoutMs) {
      if (listening) return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(t);
          resolve(true);
        };
        const t = setTimeout(() => {
          waiters = waiters.filter((w) => w !== done);
          resolve(false);
        }, timeoutMs);
        waiters.push(done);
      });
    },
    async close() {
      closed = true;
      stopHeartbeat();
      if (timer) clearTimeout(timer);
      timer = null;
      const c = client;
      client = null;
      setListening(false);
      if (c) await c.end().catch(() => undefined);
    },
  };
}
