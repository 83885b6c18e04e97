import { z } from 'zod';
import { ClusterName } from './api';
import { RunState, UnfinishedRunState } from './run-state-schema';

/**
 * Bodies of the admins' dashboard: the queue across clusters (GET /v1/queue) and the live event
 * stream (GET /v1/events, Server-Sent Events).
 */

/** Live power: only samples this recent count as "now". */
export const LIVE_POWER_WINDOW_MS = 60_000;

/** `state=running&state=queued` or `state=running,queued`. */
const StateList = z.preprocess(
  (v) => (v === undefined ? undefined : (Array.isArray(v) ? v : [v]).flatMap((x) => String(x).split(',')).map((x) => x.trim()).filter(Boolean)),
  z.array(UnfinishedRunState).min(1).optional(),
);

export const QueueQuery = z.object({
  cluster: ClusterName.optional().describe('only runs of this cluster'),
  campaign: z.uuid({ error: 'not an id (expected a UUID)' }).optional().describe('only runs of this campaign'),
  state: StateList.describe('only runs in these states; repeat the parameter or separate with commas'),
  owner: z.string().min(1).max(200).optional().describe("only runs of campaigns this user started (their name), or that a suite started (`suite:<name>`)"),
  limit: z.coerce.number().int().min(1).max(5000).default(500),
});
export type QueueQuery = z.infer<typeof QueueQuery>;

export const QueueCluster = z
  .object({
    name: z.string(),
    runCounts: z.record(z.string(), z.number()).describe("every run of the cluster's unfinished campaigns, by state"),
    lastError: z.string().nullable(),
    lastContactAt: z.string().nullable(),
  })
  .meta({ id: 'QueueCluster' });

export const QueueRun = z
  .object({
    id: z.string(),
    campaignId: z.string(),
    campaignName: z.string(),
    owner: z.string().nullable(),
    cluster: z.string().nullable(),
    configurationKey: z.string(),
    parameters: z.record(z.string(), z.unknown()),
    repetition: z.number(),
    state: UnfinishedRunState,
    slurmJobId: z.string().nullable(),
    partition: z.string().nullable().describe("the spec's resources.partition, else the cluster's default"),
    nodes: z.number().nullable().describe("nodes requested (the spec's resources.nodes)"),
    nodeList: z.string().nullable(),
    createdAt: z.string(),
    submittedAt: z.string().nullable(),
    startedAt: z.string().nullable(),
    reason: z.string().nullable(),
    powerW: z
      .number()
      .nullable()
      .describe('latest total power: per node, the last sample of each counted *.power sensor within the last 60 s, summed; null if none'),
  })
  .meta({ id: 'QueueRun' });

export const QueueView = z
  .object({
    clusters: z.array(QueueCluster),
    runs: z.array(QueueRun).describe('running first, then queued/submitting/completing, then pending; oldest first within a state'),
    total: z.number().describe('runs matching the filters'),
    truncated: z.boolean().describe('more runs match than `limit`'),
  })
  .meta({ id: 'Queue' });
export type QueueView = z.infer<typeof QueueView>;

export const EventsQuery = z.object({
  campaign: z.uuid({ error: 'not an id (expected a UUID)' }).optional().describe("only this campaign's events"),
  run: z.uuid({ error: 'not an id (expected a UUID)' }).optional().describe("only this run's events"),
});

/** `event: hello`: sent once when the stream opens. */
export const HelloEvent = z.object({ at: z.string() }).meta({ id: 'HelloEvent' });

/** `event: run`: a run changed state (or was created: from null to pending). */
export const RunStateEvent = z
  .object({
    runId: z.string(),
    campaignId: z.string(),
    cluster: z.string().nullable(),
    from: RunState.nullable(),
    to: RunState,
    at: z.string(),
  })
  .meta({ id: 'RunStateEvent' });
export type RunStateEvent = z.infer<typeof RunStateEvent>;

/** `event: power`: a run's total power now, at most once per run per second while telemetry arrives. */
export const PowerEvent = z
  .object({
    runId: z.string(),
    campaignId: z.string(),
    t: z.number().describe('ms since the epoch'),
    w: z.number().describe('total power in W, as powerW in the queue'),
  })
  .meta({ id: 'PowerEvent' });
export type PowerEvent = z.infer<typeof PowerEvent>;

/** Why erg ended an event stream (`event: closed`); the stream ends right after it. */
export const StreamCloseReason = z.enum(['token_revoked', 'token_expired', 'user_deactivated', 'access_changed']);
export type StreamCloseReason = z.infer<typeof StreamCloseReason>;

/**
 * `event: closed`: erg ended the stream because the caller's access ended or narrowed (the token
 * was revoked or expired, the user deactivated, or removed from a project the stream carried).
 * A client signs in again (or reconnects, for `access_changed`) rather than retrying blindly.
 */
export const ClosedEvent = z
  .object({ reason: StreamCloseReason, message: z.string().describe('what happened, for a person') })
  .meta({ id: 'ClosedEvent' });
export type ClosedEvent = z.infer<typeof ClosedEvent>;

/**
 * Not an event of a stream: tells every API process that someone's access changed (a token
 * revoked, a user deactivated or their memberships changed), so each re-checks the streams it
 * holds for that token or user at once. Sent on the same channel in the transaction of the change.
 */
export const AccessChangedNotice = z.object({ userId: z.string().optional(), tokenId: z.string().optional() });
export type AccessChangedNotice = z.infer<typeof AccessChangedNotice>;

/** What one notification on the `erg_events` channel carries (payloads stay well under 8000 bytes). */
export const EventNotification = z.discriminatedUnion('type', [
  RunStateEvent.extend({ type: z.literal('run') }),
  PowerEvent.extend({ type: z.literal('power') }),
  AccessChangedNotice.extend({ type: z.literal('access') }),
]);
export type EventNotification = z.infer<typeof EventNotification>;

/** GET /v1/events: what the `data:` line of each event holds (the body itself is text/event-stream). */
export const EventData = z
  .union([HelloEvent, RunStateEvent, PowerEvent, ClosedEvent])
  .describe('the `data:` of `hello`, `run`, `power` and `closed` events respectively (the body is text/event-stream)')
  .meta({ id: 'EventData' });
