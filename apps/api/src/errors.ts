import { ErgError, type ErrorStatus, type ResponseErrorCode, type SpecIssue } from '@erg/spec';
import type { SuiteError } from '@erg/suites';
import { formatBytes } from './body-limits';

/**
 * An answer of the API: an error of erg's catalog (packages/spec/src/errors.ts) that the API may
 * answer with, and the body it is sent as, always `{ error: { code, message, issues? } }`. Its
 * status comes from the catalog. Made only by `errors` below, so each code's message is written once.
 */
export class ApiError extends ErgError<ResponseErrorCode> {
  declare readonly status: number;

  constructor(
    code: ResponseErrorCode,
    message: string,
    options: { status?: ErrorStatus<ResponseErrorCode>; issues?: SpecIssue[]; retryAfterS?: number } = {},
  ) {
    super(code, message, options.status === undefined ? {} : { status: options.status });
    this.statusCode = this.status;
    this.issues = options.issues;
    this.retryAfterS = options.retryAfterS;
  }

  /**
   * The status again, under Fastify's name for it: Fastify and the routes' onError hooks read an
   * error's `statusCode` (and Fastify's validation writes it), so it is a plain property.
   */
  readonly statusCode: number;
  readonly issues: SpecIssue[] | undefined;
  /**
   * Seconds after which the same request may succeed, sent as Retry-After (error-handler.ts): set
   * where the thrower knows it, so that the services that throw need no reply to write headers on.
   */
  readonly retryAfterS: number | undefined;

  toJSON() {
    return { error: { code: this.code, message: this.message, ...(this.issues ? { issues: this.issues } : {}) } };
  }
}

/** Most issues one error lists; a body with 200,000 bad samples must not answer with 200,000 messages. */
const MAX_ISSUES = 100;

function cappedIssues(issues: SpecIssue[]): SpecIssue[] {
  if (issues.length <= MAX_ISSUES) return issues;
  return [...issues.slice(0, MAX_ISSUES), { path: '(root)', code: 'too_many_issues', message: `only the first ${MAX_ISSUES} issues are shown; fix these first` }];
}

/** Retry-After of a 409 for a cluster not probed yet: the scheduler reaches a new cluster within a cycle or two. */
const PROBE_RETRY_AFTER_S = 5;

/** Retry-After of a 429 for too many log reads at once: a read takes about a second. */
const LOG_READS_RETRY_AFTER_S = 1;
/** A bundle takes seconds to minutes to write: ask again a little later. */
const EXPORTS_RETRY_AFTER_S = 5;
/** The results of 100,000 runs take about a second to compute. */
const RESULTS_RETRY_AFTER_S = 2;

/** What each rate-limit bucket counts (rate-limit.ts), as a 429 names it. */
const BUCKET_WORDS = {
  mutations: 'changes',
  telemetry: 'telemetry batches',
  reads: 'expensive reads (campaign results, evidence bundles, run logs, telemetry series)',
} as const;

const CLUSTER_NOT_REGISTERED = (name: string) => `cluster "${name}" is not registered`;

export const errors = {
  unauthorized: () =>
    new ApiError('ERG_UNAUTHORIZED', 'missing or invalid bearer token: send "Authorization: Bearer <token>" (the quickstart writes one to .erg/token)'),
  /** GET /metrics with ERG_METRICS_TOKEN set, without that token. */
  metricsUnauthorized: () => new ApiError('ERG_UNAUTHORIZED', 'missing or invalid metrics token: send "Authorization: Bearer <ERG_METRICS_TOKEN>"'),
  validation: (where: string, all: SpecIssue[]) => {
    const issues = cappedIssues(all);
    return new ApiError('ERG_VALIDATION', `invalid ${where}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
  },
  notFound: (kind: string, id: string) => new ApiError('ERG_NOT_FOUND', `${kind} "${id}" not found`),
  /** A URL no route answers. */
  noRoute: (method: string, path: string) => new ApiError('ERG_NOT_FOUND', `no route ${method} ${path}`),
  /** `path`: where the name stands in the body (`cluster` of a campaign spec, `campaign.cluster` of a suite). */
  unknownCluster: (name: string, known: string[], path = 'cluster') =>
    new ApiError(
      'ERG_UNKNOWN_CLUSTER',
      `${CLUSTER_NOT_REGISTERED(name)}${known.length ? ` (registered: ${known.join(', ')})` : ''}; register it with POST /v1/clusters`,
      { issues: [{ path, code: 'unknown_cluster', message: CLUSTER_NOT_REGISTERED(name) }] },
    ),
  /** A campaign's power state that its cluster cannot set (capabilities from the scheduler's probe). */
  powerUnsupported: (message: string) =>
    new ApiError('ERG_POWER_UNSUPPORTED', message, { issues: [{ path: 'power', code: 'power_unsupported', message }] }),
  /** A campaign's power state on a cluster not probed yet. */
  clusterNotProbed: (name: string) =>
    new ApiError(
      'ERG_CLUSTER_NOT_PROBED',
      `erg has not reached cluster "${name}" yet, so it does not know whether the cluster can set the power state this campaign asks for; the scheduler probes a new cluster within seconds: retry shortly (see GET /v1/clusters/${name} capabilities)`,
      { retryAfterS: PROBE_RETRY_AFTER_S },
    ),
  /** A suite's pinned baseline that is no campaign of the suite's project. */
  unknownBaselineCampaign: (campaignId: string) =>
    new ApiError('ERG_UNKNOWN_CAMPAIGN', `baseline campaign "${campaignId}" does not exist`, {
      issues: [{ path: 'baseline.campaignId', code: 'unknown_campaign', message: 'no campaign with this id' }],
    }),
  /** Why a suite could not be triggered (@erg/suites), as the API says it. */
  suiteRefused: (err: SuiteError) =>
    new ApiError(err.code, err.code === 'ERG_SUITE_UNKNOWN_CLUSTER' ? `${err.message}; register it with POST /v1/clusters or change the suite` : err.message),
  conflict: (message: string) => new ApiError('ERG_CONFLICT', message),
  /** New work in a deactivated project or on a deactivated cluster, or a change to a deactivated project. */
  deactivated: (kind: 'project' | 'cluster', name: string) =>
    new ApiError(
      'ERG_DEACTIVATED',
      `${kind} "${name}" is deactivated: its history can be read, but nothing new starts in it; ` +
        (kind === 'project' ? 'an admin reactivates it with POST /v1/projects/' : "the cluster's maintainers reactivate it with POST /v1/clusters/") +
        `${name}/reactivate`,
    ),
  forbidden: (message: string) => new ApiError('ERG_FORBIDDEN', message),
  /** A token asked to create a token beyond its own bounds; one issue per bound exceeded. */
  tokenWider: (issues: SpecIssue[]) =>
    new ApiError('ERG_TOKEN_WIDER', `a token can only create tokens within its own bounds: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues }),
  notReady: (message: string) => new ApiError('ERG_NOT_READY', message),
  rateLimited: (bucket: 'mutations' | 'telemetry' | 'reads', limit: number, retryAfterS: number, scope: { kind: 'token' } | { kind: 'user'; name: string } = { kind: 'token' }) =>
    new ApiError(
      'ERG_RATE_LIMITED',
      `too many ${BUCKET_WORDS[bucket]} ${scope.kind === 'user' ? `by user "${scope.name}" (all of their tokens together)` : 'with this token'}: ` +
        `the limit is ${limit} a minute; retry in ${retryAfterS} s (see the Retry-After header)`,
    ),
  bodyTooLarge: (limitBytes: number, route: string) =>
    new ApiError('FST_ERR_CTP_BODY_TOO_LARGE', `request body is larger than ${formatBytes(limitBytes)}, the limit of ${route}`),
  /** The router refused the URL before any route saw it: a path segment too long (414) or not valid percent-encoding. */
  badUrl: (tooLong: boolean) =>
    tooLong
      ? new ApiError('ERG_BAD_URL', 'a path segment of the URL is too long (ids and names are at most a few hundred characters)', { status: 414 })
      : new ApiError('ERG_BAD_URL', 'the URL is not valid: check its percent-encoding'),
  /** The worker threads that validate large bodies have a full queue (offload.ts). */
  busy: () => new ApiError('ERG_BUSY', 'the API is validating too many large requests at once; retry in a second'),
  /** The results workers have a full queue (results-reader.ts). */
  resultsBusy: () =>
    new ApiError('ERG_BUSY', "the API is computing too many campaigns' results at once; retry in a few seconds (see the Retry-After header)", { retryAfterS: RESULTS_RETRY_AFTER_S }),
  /** A body whose validation ran out of time or memory in its worker thread (offload.ts). */
  tooCostly: (what: string, why: string) =>
    new ApiError('ERG_TOO_COSTLY', `the ${what} ${why}, more than erg spends on one request; make it smaller or simpler`),
  /** Postgres cannot be reached now (database-unavailable.ts says which failures mean that); answered with Retry-After. */
  databaseUnavailable: () => new ApiError('ERG_DATABASE_UNAVAILABLE', 'the database cannot be reached now (it may be restarting); retry in a few seconds (see the Retry-After header)'),
  clusterUnavailable: (name: string, why: string) => new ApiError('ERG_CLUSTER_UNAVAILABLE', `cluster "${name}" cannot be reached now: ${why}`),
  /** GET /v1/runs/{id}/logs: the job left something erg does not read where a log belongs (a FIFO, a directory, a symlink…). */
  logUnreadable: (runId: string, why: string) => new ApiError('ERG_LOG_UNREADABLE', `the logs of run ${runId} cannot be read: ${why}`),
  /** GET /v1/runs/{id}/logs: the token or the run's cluster already has as many log reads in flight as allowed. */
  logReadsBusy: (holder: string, limit: number) =>
    new ApiError('ERG_RATE_LIMITED', `${holder} already has ${limit} log reads in flight, the most at once; retry in a second (see the Retry-After header)`, {
      retryAfterS: LOG_READS_RETRY_AFTER_S,
    }),
  /** Results or an evidence bundle asked for while the token has ERG_EXPENSIVE_READS_PER_TOKEN of them being made (expensive-reads.ts). */
  expensiveReadsBusy: (limit: number) =>
    new ApiError(
      'ERG_RATE_LIMITED',
      `this token already has ${limit} campaign results or evidence bundles being made, the most at once; retry when one is done (see the Retry-After header)`,
      { retryAfterS: RESULTS_RETRY_AFTER_S },
    ),
  /** GET /v1/campaigns/{id}/export: ERG_EXPORTS_AT_ONCE bundles are being written already. */
  exportsBusy: (limit: number) =>
    new ApiError('ERG_RATE_LIMITED', `the API is writing ${limit} evidence bundles already, the most at once; retry in a few seconds (see the Retry-After header)`, {
      retryAfterS: EXPORTS_RETRY_AFTER_S,
    }),
  /** Anything unexpected: the details go to the log, never to the caller. */
  internal: () => new ApiError('ERG_INTERNAL', 'internal error; see the API log'),
};
