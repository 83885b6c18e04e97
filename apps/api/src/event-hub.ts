import type { FastifyBaseLogger } from 'fastify';
import { listenForEvents, type EventListener } from '@erg/db';
import { EventNotification } from '@erg/spec';

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

interface Subscriber {
  filter: EventFilter;
  send: (e: HubEvent) => void;
}

/**
 * Fans the `erg_events` notifications out to the open event streams: one LISTEN connection for
 * the whole API, whatever the number of streams. The connection is opened by the first stream
 * (building the app, e.g. to print its OpenAPI document, must not connect anywhere) and closed
 * with the app.
 */
export class EventHub {
  private readonly subscribers = new Set<Subscriber>();
  private listener: EventListener | null = null;
  private seq = 0;

  /** The tail of the deliveries to project-limited streams (kept in order). */
  private limitedDelivery: Promise<void> = Promise.resolve();
  /** campaign id → project id; a campaign never changes project, so entries never go stale. */
  private readonly projects = new Map<string, Promise<string | null>>();

  constructor(
    private readonly databaseUrl: string,
    private readonly log: FastifyBaseLogger,
    /** Looks a campaign's project up, for streams limited to some projects. */
    private readonly projectOf: (campaignId: string) => Promise<string | null> = async () => null,
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
  subscribe(filter: EventFilter, send: (e: HubEvent) => void): () => void {
    this.start();
    const sub = { filter, send };
    this.subscribers.add(sub);
    return () => this.subscribers.delete(sub);
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
