/**
 * SessionManager: connection and reconnect. It hands out the connection's live session, opens a
 * new one (through the hop chain, hop-chain.ts) when there is none, backs off after failed
 * attempts, retires sessions whose settings were replaced, and says where the connection stands.
 *
 * Failure model
 * - After a failed connect attempt, further attempts wait an exponential backoff
 *   (SSH_RECONNECT_BACKOFF: 250 ms doubling to 30 s, jittered); calls made during the wait fail
 *   at once with the last error instead of hammering the login node (which could trip fail2ban)
 *   or hanging the scheduler's poll.
 * - When an established connection drops, every operation in flight and every caller waiting
 *   for a channel fails with ConnectionLostError (retryable); the next call reconnects at once.
 * - `state` and `lastError` say where the connection stands, for the scheduler to show as the
 *   pending reason of the runs it cannot submit.
 *
 * Rotation
 * - `reconfigure` swaps the credentials (or the whole endpoint) without downtime: the live session
 *   is retired — operations on it run to their end, and it closes once the last has — while new
 *   operations open a session with the new settings.
 * - A live session whose certificate expires is retired the same way: no new work on it.
 */
import { Backoff } from '@erg/backoff';
import type { CertificateParse } from './certificate';
import {
  checkMaxSessions,
  loginHostPort,
  resolveConnectionOptions,
  SSH_RECONNECT_BACKOFF,
  withEndpoint,
  type ClusterConnectionOptions,
  type ClusterEndpointOptions,
  type ConnectionState,
  type ResolvedConnectionOptions,
} from './connection-options';
import { CertificateExpiredError, ConnectionClosedError, ConnectionLostError, type ErgSlurmError } from './errors';
import { connectChain, expiredHop, hopsOf, type ConnectedChain, type Hop } from './hop-chain';
import { Session, type ChannelCounters } from './session';

export class SessionManager {
  private settings: ResolvedConnectionOptions;
  private current: Session | null = null;
  /** Bumped by reconfigure: a connect attempt started before it yields a session that is retired at once. */
  private generation = 0;
  /** The generation `connecting` connects with. */
  private connectingGeneration = 0;
  /** Retired sessions still finishing their operations. */
  private readonly retiring = new Set<Session>();
  /** Certificates of the current settings, parsed once (session() looks at their expiry on every call). */
  private certificates = new Map<string, CertificateParse>();
  private connecting: Promise<Session> | null = null;
  /** Failed connect attempts in a row, and how long the next one waits. */
  private readonly reconnect: Backoff;
  private nextAttempt = 0;
  private closed = false;
  private error: ErgSlurmError | null = null;
  /** The fingerprint required of the server: the configured one, or the one learned on first use. */
  private pinned: string | null;

  constructor(
    options: ClusterConnectionOptions,
    private readonly counters: ChannelCounters,
  ) {
    this.settings = resolveConnectionOptions(options);
    this.reconnect = new Backoff({ ...SSH_RECONNECT_BACKOFF, ...options.backoff });
    this.pinned = this.settings.hostKeySha256;
    // The semaphore validates maxSessions too, but fail here, at configuration time.
    checkMaxSessions(this.settings);
  }

  /** The settings now, defaults filled in. */
  get options(): ResolvedConnectionOptions {
    return this.settings;
  }

  /** The login node, `host:port`, as messages name it. */
  get hostPort(): string {
    return loginHostPort(this.settings);
  }

  /** The pinned fingerprint: configured, or learned by the first successful connection (trust on first use); null before that. */
  get hostKeySha256(): string | null {
    return this.pinned;
  }

  get state(): ConnectionState {
    if (this.closed) return 'closed';
    if (this.current?.alive) return 'ready';
    if (this.connecting) return 'connecting';
    return this.reconnect.failures > 0 ? 'backoff' : 'idle';
  }

  /** The last connect failure or connection loss; null once a connection succeeds. */
  get lastError(): ErgSlurmError | null {
    return this.error;
  }

  /** When the next connect attempt may start (epoch ms); 0 when not backing off. */
  get nextAttemptAt(): number {
    return this.reconnect.failures > 0 ? this.nextAttempt : 0;
  }

  /** Callers waiting for a channel of the live session. */
  get waitingForChannel(): number {
    return this.current?.channels.waiting ?? 0;
  }

  /** Replaces the endpoint (see ClusterConnection.reconfigure): the live session is retired, the next call connects at once. */
  reconfigure(endpoint: ClusterEndpointOptions): void {
    if (this.closed) return;
    this.settings = withEndpoint(this.settings, endpoint);
    this.certificates = new Map();
    this.pinned = endpoint.hostKeySha256;
    this.generation++;
    this.reconnect.succeeded();
    this.nextAttempt = 0;
    if (this.current) this.retire(this.current);
  }

  /**
   * Runs `body` with a session, counted as one of its users: a session retired meanwhile
   * (reconfigure, an expired certificate) stays up until its last user is done.
   */
  async use<T>(body: (session: Session) => Promise<T>): Promise<T> {
    const session = await this.enter();
    try {
      return await body(session);
    } finally {
      this.leave(session);
    }
  }

  /** A session, counted as one more user until `leave(session)` (for a use that outlives the call, a stream). */
  async enter(): Promise<Session> {
    const session = await this.session();
    session.users++;
    return session;
  }

  leave(session: Session): void {
    session.users--;
    if (session.retired && session.users === 0) void this.shut(session, new ConnectionClosedError(this.hostPort));
  }

  /** Closes the connection; operations in flight and later calls fail with ConnectionClosedError. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const session = this.current ?? (await this.connecting?.catch(() => null)) ?? null;
    this.current = null;
    const sessions = new Set([...this.retiring, ...(session ? [session] : [])]);
    this.retiring.clear();
    await Promise.all([...sessions].map((s) => this.shut(s, new ConnectionClosedError(this.hostPort))));
  }

  private async session(): Promise<Session> {
    if (this.closed) throw new ConnectionClosedError(this.hostPort);
    if (this.current?.alive) {
      // A certificate that expired while the session lived: no new work on it (the site meant
      // erg's access to end there); what runs on it finishes. The connect below then says why.
      if (!expiredHop(this.hops())) return this.current;
      this.retire(this.current);
    }
    // An attempt with settings reconfigure has replaced serves those who waited for it, not new callers.
    if (this.connecting && this.connectingGeneration === this.generation) return this.connecting;
    if (this.reconnect.failures > 0 && Date.now() < this.nextAttempt && this.error) throw this.error;
    const attempt = this.connect().finally(() => {
      if (this.connecting === attempt) this.connecting = null;
    });
    this.connecting = attempt;
    this.connectingGeneration = this.generation;
    return attempt;
  }

  /** Takes the session out of use: new operations get another; it closes once its users are done. */
  private retire(session: Session): void {
    if (session.retired) return;
    session.retired = true;
    if (this.current === session) this.current = null;
    if (!session.alive) return;
    this.retiring.add(session);
    // Callers that were handed the session in this tick count themselves as users in a later microtask.
    setImmediate(() => {
      if (session.users === 0) void this.shut(session, new ConnectionClosedError(this.hostPort));
    });
  }

  /** Ends the session (failing what is still in flight with `err`) and closes every hop of it. */
  private async shut(session: Session, err: ErgSlurmError): Promise<void> {
    this.retiring.delete(session);
    this.endSession(session, err);
    await new Promise<void>((resolve) => {
      session.client.once('close', () => resolve());
      session.client.end();
      for (const hop of session.via) hop.end();
      // 'close' normally follows end() at once; do not hang a test's afterAll on a dead socket.
      setTimeout(resolve, 2000).unref();
    });
  }

  /** Ends a session: fails its waiters and operations in flight with `err`. Idempotent. */
  private endSession(session: Session, err: ErgSlurmError): void {
    if (!session.alive) return;
    if (this.current === session) this.current = null;
    // A retired session's end is no failure of the connection's current settings.
    if (!(err instanceof ConnectionClosedError) && !session.retired) this.error = err;
    session.end(err);
  }

  /** The chain of this connection's settings: its jump hosts, then the login node. */
  private hops(): Hop[] {
    return hopsOf(this.settings, this.pinned, this.certificates);
  }

  private async connect(): Promise<Session> {
    const generation = this.generation;
    const hops = this.hops();
    const expired = expiredHop(hops);
    if (expired) {
      // Not an attempt: nothing was sent, so no backoff; the next call checks again (a rotation may have come).
      const err = new CertificateExpiredError(expired.account, expired.certificate!.validBefore!, expired.rotate);
      this.error = err;
      throw err;
    }
    let chain: ConnectedChain;
    try {
      chain = await connectChain(hops, this.settings);
    } catch (err) {
      this.nextAttempt = Date.now() + this.reconnect.next();
      this.error = err as ErgSlurmError;
      throw err;
    }
    const { client, via, presented } = chain;
    if (this.closed) {
      client.end();
      for (const hop of via) hop.end();
      throw new ConnectionClosedError(this.hostPort);
    }
    const session = new Session(client, via, this.settings.maxSessions, this.counters, this);
    this.reconnect.succeeded();
    this.nextAttempt = 0;
    this.error = null;
    this.watchLoss(session, hops);
    if (generation !== this.generation) {
      // Settings changed while this one connected: it serves whoever waited for it, then closes.
      this.retire(session);
      return session;
    }
    this.current = session;
    // Trust on first use ends here: authentication succeeded with this key, so pin it.
    this.pinned ??= presented;
    return session;
  }

  /** Ends `session` with ConnectionLostError when its client, or any hop under it, closes. */
  private watchLoss(session: Session, hops: readonly Hop[]): void {
    const { client, via } = session;
    const lost = (why: string, cause?: Error | null) => {
      this.endSession(session, new ConnectionLostError(this.hostPort, why, { cause: cause ?? undefined }));
      // Closing the login node's connection closes the chain, and a jump host that drops takes it with it.
      client.end();
      for (const hop of via) hop.end();
      this.retiring.delete(session);
    };
    client.on('error', (err: Error) => {
      session.lastClientError = err;
    });
    client.on('close', () => lost(session.lastClientError?.message ?? 'the server closed the connection', session.lastClientError));
    for (const [i, hop] of via.entries()) {
      let hopError: Error | null = null;
      hop.on('error', (err: Error) => {
        hopError = err;
      });
      hop.on('close', () => lost(`${hops[i]!.label} closed the connection${hopError ? ` (${hopError.message})` : ''}`, hopError));
    }
  }
}
