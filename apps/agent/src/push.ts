import type http from 'node:http';
import type https from 'node:https';
import { Backoff, type BackoffOptions } from '@erg/backoff';
import { SENT_AT_HEADER } from '@erg/spec/sensors';
import { nowMs } from './clock';
import { errorMessage, type Logger } from './log';
import type { Spool, SpooledBatch } from './spool';
import { AGENT_VERSION } from './version';

// Pushes spooled batches to `POST {api}/v1/runs/{runId}/telemetry`, one request in flight, in
// seq order. Outcomes:
//   2xx                 acknowledged → settled
//   400 (and other 4xx) the server refuses this batch for good: logged, counted as rejected,
//                       settled (never resent), next batch
//   401 / 403 / 404     this run cannot take telemetry: pushing stops for the rest of the run
//                       (sampling and spooling go on; the scheduler pulls the spool instead)
//   network error, timeout (10 s), 408, 429, 5xx
//                       kept; retried with exponential backoff 0.5 s → 30 s
// Resending is harmless: the server is idempotent on (run, node, seq).
// Every request carries the agent's clock when it was sent (x-erg-sent-at, the clock its samples
// are stamped with): the server bounds the agent's clock offset from it (a validity gate).

const GZIP_ABOVE = 64 * 1024;
const REQUEST_TIMEOUT_MS = 10_000;
/**
 * Retry delays: 0.5 s doubling to 30 s, exact. No jitter: there is one agent per node and run with
 * one request in flight, and the agents of a job fail at their own batch times (each batch window
 * starts when its agent did), not all at one instant as streams cut by an API restart do; exact
 * doubling keeps those offsets.
 */
export const PUSH_RETRY_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 30_000, jitter: 0 };

export interface PushStats {
  /** Batches the server acknowledged (duplicates included). */
  pushed: number;
  /** …of which it had already stored. */
  duplicates: number;
  rejected: number;
  /** Failed attempts that will be retried. */
  retries: number;
  requests: number;
  gzipped: number;
  /** Set when a 401/403/404 stopped pushing. */
  stoppedBy: number | null;
}

export interface PusherOptions {
  apiUrl: string;
  runId: string;
  token: string;
  spool: Spool;
  log: Logger;
  /** Called with the new settled seq whenever it moves. */
  onSettled(seq: number): void;
  requestTimeoutMs?: number;
}

type Outcome = { kind: 'ack'; duplicate: boolean } | { kind: 'reject'; message: string } | { kind: 'stop'; status: number; message: string } | { kind: 'retry'; message: string };

export class Pusher {
  private readonly queue: SpooledBatch[] = [];
  private readonly url: URL;
  private readonly transport: typeof http | typeof https;
  private readonly agent: http.Agent;
  private inFlight: http.ClientRequest | null = null;
  private busy = false;
  private readonly retryDelay = new Backoff(PUSH_RETRY_BACKOFF);
  private backoffTimer: NodeJS.Timeout | undefined;
  private drainWaiters: (() => void)[] = [];
  private draining = false;
  private closed = false;
  readonly stats: PushStats = { pushed: 0, duplicates: 0, rejected: 0, retries: 0, requests: 0, gzipped: 0, stoppedBy: null };

  constructor(private readonly options: PusherOptions) {
    const base = options.apiUrl.endsWith('/') ? options.apiUrl : `${options.apiUrl}/`;
    this.url = new URL(`v1/runs/${encodeURIComponent(options.runId)}/telemetry`, base);
    // Only the transport in use is loaded (and zlib only for a large body): each costs RSS.
    this.transport = this.url.protocol === 'https:' ? (require('node:https') as typeof https) : (require('node:http') as typeof http);
    this.agent = new this.transport.Agent({ keepAlive: true, maxSockets: 1 });
  }

  /** Batches waiting to be acknowledged. */
  get backlog(): number {
    return this.queue.length;
  }

  get stopped(): boolean {
    return this.stats.stoppedBy !== null || this.closed;
  }

  enqueue(batch: SpooledBatch): void {
    this.queue.push(batch);
    this.kick();
  }

  /** Sends the next batch unless one is in flight, a backoff is pending, or pushing stopped. */
  private kick(): void {
    if (this.busy || this.backoffTimer || this.stopped) return;
    const next = this.queue[0];
    if (!next) {
      this.wakeDrainers();
      return;
    }
    this.busy = true;
    void this.send(next).then((outcome) => this.settle(next, outcome));
  }

  private settle(batch: SpooledBatch, outcome: Outcome): void {
    this.busy = false;
    const { log } = this.options;
    switch (outcome.kind) {
      case 'ack':
      case 'reject':
        this.queue.shift();
        this.retryDelay.succeeded();
        if (outcome.kind === 'ack') {
          this.stats.pushed += 1;
          if (outcome.duplicate) this.stats.duplicates += 1;
        } else {
          this.stats.rejected += 1;
          log.error('telemetry batch rejected by the server; not resent', { seq: batch.seq, message: outcome.message });
        }
        this.options.onSettled(batch.seq);
        break;
      case 'stop':
        this.stats.stoppedBy = outcome.status;
        log.error('the API refused this run’s telemetry; pushing stopped (the spool keeps everything)', { status: outcome.status, message: outcome.message });
        this.wakeDrainers();
        return;
      case 'retry': {
        this.stats.retries += 1;
        const delay = this.retryDelay.next();
        // While draining at exit, retry sooner: the drain deadline bounds the attempts.
        const wait = this.draining ? Math.min(delay, 200) : delay;
        log.warnOnce(`push-retry:${outcome.message}`, 'telemetry push failed; will retry', { seq: batch.seq, message: outcome.message, retryInMs: wait });
        if (this.closed) return;
        this.backoffTimer = setTimeout(() => {
          this.backoffTimer = undefined;
          this.kick();
        }, wait);
        return;
      }
    }
    this.kick();
  }

  private async send(batch: SpooledBatch): Promise<Outcome> {
    let body: Buffer;
    try {
      body = this.options.spool.readLine(batch);
    } catch (err) {
      return { kind: 'retry', message: errorMessage(err) };
    }
    const headers: http.OutgoingHttpHeaders = {
      authorization: `Bearer ${this.options.token}`,
      'content-type': 'application/json',
      'user-agent': `erg-agent/${AGENT_VERSION}`,
    };
    if (body.length > GZIP_ABOVE) {
      const zlib = require('node:zlib') as typeof import('node:zlib');
      body = await new Promise<Buffer>((resolve, reject) => zlib.gzip(body, (err, out) => (err ? reject(err) : resolve(out))));
      headers['content-encoding'] = 'gzip';
      this.stats.gzipped += 1;
    }
    headers['content-length'] = body.length;
    if (this.closed) return { kind: 'retry', message: 'agent stopping' };
    this.stats.requests += 1;
    // Last, after any compression: the nearer to the send, the tighter the server's bound.
    headers[SENT_AT_HEADER] = nowMs().toFixed(3);
    return new Promise<Outcome>((resolve) => {
      let done = false;
      const finish = (o: Outcome) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.inFlight = null;
        resolve(o);
      };
      const req = this.transport.request(this.url, { method: 'POST', headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < 64 * 1024) chunks.push(c);
          size += c.length;
        });
        res.on('error', (err) => finish({ kind: 'retry', message: err.message }));
        res.on('end', () => finish(classify(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'))));
      });
      const timer = setTimeout(() => {
        req.destroy(new Error(`no answer within ${this.options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS} ms`));
      }, this.options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS);
      req.on('error', (err) => finish({ kind: 'retry', message: err.message }));
      this.inFlight = req;
      req.end(body);
    });
  }

  /** Resolves once every queued batch is settled, pushing stopped, or `timeoutMs` passed. */
  async drain(timeoutMs: number): Promise<void> {
    this.draining = true;
    if (this.backoffTimer) {
      clearTimeout(this.backoffTimer);
      this.backoffTimer = undefined;
    }
    this.kick();
    if (this.settledOrStopped()) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.drainWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private settledOrStopped(): boolean {
    return this.stopped || (this.queue.length === 0 && !this.busy);
  }

  private wakeDrainers(): void {
    if (!this.settledOrStopped()) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }

  /** Stops for good: aborts a request in flight and frees the connection. */
  close(): void {
    this.closed = true;
    if (this.backoffTimer) clearTimeout(this.backoffTimer);
    this.inFlight?.destroy(new Error('agent stopping'));
    this.agent.destroy();
  }
}

function classify(status: number, text: string): Outcome {
  if (status >= 200 && status < 300) {
    let duplicate = false;
    try {
      duplicate = (JSON.parse(text) as { duplicate?: unknown }).duplicate === true;
    } catch {
      // an acknowledgement all the same
    }
    return { kind: 'ack', duplicate };
  }
  const message = serverMessage(text) || `HTTP ${status}`;
  if (status === 401 || status === 403 || status === 404) return { kind: 'stop', status, message };
  if (status === 408 || status === 429 || status >= 500 || status === 0) return { kind: 'retry', message: `HTTP ${status}: ${message}` };
  return { kind: 'reject', message: `HTTP ${status}: ${message}` };
}

function serverMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown };
    if (typeof body.message === 'string') return body.message;
    if (typeof body.error === 'string') return body.error;
  } catch {
    // not JSON
  }
  return text.slice(0, 500);
}
