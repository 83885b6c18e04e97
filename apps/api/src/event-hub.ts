import type { FastifyBaseLogger } from 'fastify';
import { listenForEvents, type EventListener, type TokenIdentity, type TokenRefusal } from '@erg/db';
import { EventNotification, type AccessChangedNotice, type StreamCloseReason } from '@erg/spec';

/** Which events one stream wants: all, or one campaign's, or one run's. */
export interface EventFilter {
  campaign?: string | undefined;
  run?: string | undefined;
  /** Only events of campaigns in these projects (the caller's); null: every project (admin). */
  projectIds?: string[] | null;
}

/** One parsed event as streams receive it: its name (the SSE `event:`), id and body. */
export interface HubEvent {
  id: number;
  name: 'run' | 'power';
  data: Record<string, unknown>;
}

/**
 * A stream opened with an API token: whose it is, which projects it may see (null: all, an admin's),
 * and how to end it when that access ends. Streams without one (tests of the hub) are never re-checked.
 */
export interface StreamAccess {
  tokenId: string;
  userId: string;
  /** Project ids the token may read now (visibleProjects); null: every project. */
  visible(identity: TokenIdentity): string[] | null;
  /** Sends a last `closed` event and ends the stream. */
  close(reason: StreamCloseReason, message: string): void;
}

interface Subscriber {
  filter: EventFilter;
  send: (e: HubEvent) => void;
  access?: StreamAccess | undefined;
}

/** What re-checking needs: the tokens as signing in would judge them now (reauthenticateTokens of @erg/db). */
export type Reauthenticate = (tokenIds: readonly string[]) => Promise<Map<string, TokenIdentity | TokenRefusal>>;

const REFUSAL_MESSAGES: Record<TokenRefusal, string> = {
  token_revoked: 'the token of this stream was revoked',
  token_expired: 'the token of this stream expired',
  user_deactivated: 'the user of this stream was deactivated',
};

/** Whether `now` reaches every project `before` did (null: every project). */
function reachesAll(before: string[] | null, now: string[] | null): boolean {
  if (now === null) return true;
  return before !== null && before.every((id) => now.includes(id));
}

/**
 * Fans the `erg_events` notifications out to the open event streams: one LISTEN connection for
 * the whole API, whatever the number of streams. The connection is opened by the first stream
 * (building the app, e.g. to print its OpenAPI document, must not connect anywhere) and closed
 * with the app.
 *
 * Access ends on open streams too: a stream shows what its token could read when it opened, and
 * is re-checked (`recheck`) when a notice on the same channel says its token or user changed
 * (revoked, deactivated, removed from a project: sent in the statement that made the change, so
 * every API process hears it), and every `recheckMs` whatever happens (a token expiring sends no
 * notice, and notices sent while the LISTEN connection is down are lost). A stream whose token no
 * longer works, or that no longer reaches a project it carried, gets a `closed` event and ends;
 * one that reaches more projects than before carries them from then on.
 */
export class EventHub {
  private readonly subscribers = new Set<Subscriber>();
  private listener: EventListener | null = null;
  private seq = 0;

  /** The tail of the deliveries to project-limited streams (kept in order). */
  private limitedDelivery: Promise<void> = Promise.resolve();
  /** campaign id → project id; a campaign never changes project, so entries never go stale. */
  private readonly projects = new Map<string, Promise<string | null>>();

  /** The periodic re-check of every stream's access; runs while there are streams with access to check. */
  private recheckTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly databaseUrl: string,
    private readonly log: FastifyBaseLogger,
    /** Looks a campaign's project up, for streams limited to some projects. */
    private readonly projectOf: (campaignId: string) => Promise<string | null> = async () => null,
    private readonly access: { reauthenticate: Reauthenticate; recheckMs: number } | null = null,
  ) {}

  private cachedProjectOf(campaignId: string): Promise<string | null> {
    let p = this.projects.get(campaignId);
    if (!p) {
      if (this.projects.size > 100_000) this.projects.clear();
      p = this.projectOf(campaignId).catch(() => null);
      this.projects.set(campaignId, p);
    }
    return p;
  }

  /** Registers a stream; returns its unsubscribe. Starts listening if nothing listens yet. */
  subscribe(filter: EventFilter, send: (e: HubEvent) => void, access?: StreamAccess): () => void {
    this.start();
    const sub: Subscriber = { filter, send, access };
    this.subscribers.add(sub);
    if (access && this.access && !this.recheckTimer) {
      this.recheckTimer = setInterval(() => void this.recheck(), this.access.recheckMs);
      this.recheckTimer.unref();
    }
    return () => {
      this.subscribers.delete(sub);
      if (this.recheckTimer && ![...this.subscribers].some((s) => s.access)) {
        clearInterval(this.recheckTimer);
        this.recheckTimer = null;
      }
    };
  }

  /**
   * Re-checks the access of the streams of a token or a user (`which`), or of every stream, with
   * one query: streams whose token no longer works, or that lost a project, are closed (see the
   * class comment). Never throws: a failed check is logged, and the next one tries again.
   */
  async recheck(which: AccessChangedNotice = {}): Promise<void> {
    if (!this.access) return;
    const subs = [...this.subscribers].filter(
      (s) => s.access && (which.tokenId === undefined || s.access.tokenId === which.tokenId) && (which.userId === undefined || s.access.userId === which.userId),
    );
    if (subs.length === 0) return;
    let judged: Map<string, TokenIdentity | TokenRefusal>;
    try {
      judged = await this.access.reauthenticate([...new Set(subs.map((s) => s.access!.tokenId))]);
    } catch (err) {
      this.log.warn({ err }, 'event stream: could not re-check the access of open streams; trying again at the next check');
      return;
    }
    for (const sub of subs) {
      if (!this.subscribers.has(sub)) continue;
      const now = judged.get(sub.access!.tokenId) ?? 'token_revoked';
      if (typeof now === 'string') {
        sub.access!.close(now, `${REFUSAL_MESSAGES[now]}; sign in again`);
        continue;
      }
      const visible = sub.access!.visible(now);
      if (!reachesAll(sub.filter.projectIds ?? null, visible)) {
        sub.access!.close('access_changed', "this token's access changed (it no longer reaches a project this stream carried); reconnect to stream what it reaches now");
        continue;
      }
      sub.filter.projectIds = visible;
    }
  }

  /** Resolves true once events can arrive (LISTEN active), false after `timeoutMs`. */
  whenListening(timeoutMs: number): Promise<boolean> {
    return this.start().whenListening(timeoutMs);
  }

  /** The next SSE id (also used for `hello`), increasing for the life of the process. */
  nextId(): number {
    return ++this.seq;
  }

  async close(): Promise<void> {
    this.subscribers.clear();
    if (this.recheckTimer) clearInterval(this.recheckTimer);
    this.recheckTimer = null;
    const l = this.listener;
    this.listener = null;
    await l?.close();
  }

  private start(): EventListener {
    this.listener ??= listenForEvents({
      url: this.databaseUrl,
      onEvent: (payload) => this.dispatch(payload),
      onState: (state, err) =>
        state === 'lost'
          ? this.log.warn({ err }, 'event stream: lost the LISTEN connection; reconnecting (events until then are missed)')
          : this.log.info('event stream: listening on erg_events'),
    });
    return this.listener;
  }

  private dispatch(payload: unknown): void {
    const parsed = EventNotification.safeParse(payload);
    if (!parsed.success) {
      this.log.warn({ payload }, 'event stream: dropped a notification that is not an erg event');
      return;
    }
    if (parsed.data.type === 'access') {
      const { type: _, ...which } = parsed.data;
      // Every notice names a token or a user: an empty one would re-check every stream, which the timer does.
      if (which.tokenId !== undefined || which.userId !== undefined) void this.recheck(which);
      return;
    }
    const { type, ...data } = parsed.data;
    const event: HubEvent = { id: this.nextId(), name: type, data };
    const targets = [...this.subscribers].filter(
      (sub) => !(sub.filter.campaign && sub.filter.campaign !== data.campaignId) && !(sub.filter.run && sub.filter.run !== data.runId),
    );
    const open = targets.filter((sub) => sub.filter.projectIds == null);
    for (const sub of open) sub.send(event);
    const limited = targets.filter((sub) => sub.filter.projectIds != null);
    if (limited.length === 0) return;
    // Streams of non-admins see their projects' events only. The lookups are chained so that
    // these streams, too, get events in the order they were committed.
    const projectOf = this.cachedProjectOf(String(data.campaignId));
    this.limitedDelivery = this.limitedDelivery.then(async () => {
      const projectId = await projectOf;
      for (const sub of limited) if (projectId !== null && sub.filter.projectIds!.includes(projectId) && this.subscribers.has(sub)) sub.send(event);
    }).catch((err: Error) => this.log.warn({ err }, 'event stream: could not deliver an event'));
  }
}
