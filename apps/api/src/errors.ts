import type { SpecIssue } from '@erg/spec';
import { formatBytes } from './body-limits';

/**
 * Every error the API answers with, in one place: a stable code, an HTTP status, and a message
 * that says what to do. The body is always `{ error: { code, message, issues? } }`.
 */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    readonly statusCode: number,
    message: string,
    readonly issues?: SpecIssue[],
  ) {
    super(message);
  }

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

export const errors = {
  unauthorized: () =>
    new ApiError('ERG_UNAUTHORIZED', 401, 'missing or invalid bearer token: send "Authorization: Bearer <token>" (the quickstart writes one to .erg/token)'),
  validation: (where: string, all: SpecIssue[]) => {
    const issues = cappedIssues(all);
    return new ApiError('ERG_VALIDATION', 400, `invalid ${where}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  },
  notFound: (kind: string, id: string) => new ApiError('ERG_NOT_FOUND', 404, `${kind} "${id}" not found`),
  unknownCluster: (name: string, known: string[]) =>
    new ApiError(
      'ERG_UNKNOWN_CLUSTER',
      422,
      `cluster "${name}" is not registered${known.length ? ` (registered: ${known.join(', ')})` : ''}; register it with POST /v1/clusters`,
      [{ path: 'cluster', code: 'unknown_cluster', message: `cluster "${name}" is not registered` }],
    ),
  conflict: (message: string) => new ApiError('ERG_CONFLICT', 409, message),
  forbidden: (message: string) => new ApiError('ERG_FORBIDDEN', 403, message),
  /** A token asked to create a token beyond its own bounds; one issue per bound exceeded. */
  tokenWider: (issues: SpecIssue[]) =>
    new ApiError('ERG_TOKEN_WIDER', 403, `a token can only create tokens within its own bounds: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues),
  notReady: (message: string) => new ApiError('ERG_NOT_READY', 409, message),
  rateLimited: (bucket: 'mutations' | 'telemetry', limit: number, retryAfterS: number, scope: { kind: 'token' } | { kind: 'user'; name: string } = { kind: 'token' }) =>
    new ApiError(
      'ERG_RATE_LIMITED',
      429,
      `too many ${bucket === 'telemetry' ? 'telemetry batches' : 'changes'} ${scope.kind === 'user' ? `by user "${scope.name}" (all of their tokens together)` : 'with this token'}: ` +
        `the limit is ${limit} a minute; retry in ${retryAfterS} s (see the Retry-After header)`,
    ),
  bodyTooLarge: (limitBytes: number, route: string) =>
    new ApiError('FST_ERR_CTP_BODY_TOO_LARGE', 413, `request body is larger than ${formatBytes(limitBytes)}, the limit of ${route}`),
  /** The router refused the URL before any route saw it: a path segment too long or not valid percent-encoding. */
  badUrl: (statusCode: number) =>
    new ApiError('ERG_BAD_URL', statusCode, statusCode === 414 ? 'a path segment of the URL is too long (ids and names are at most a few hundred characters)' : 'the URL is not valid: check its percent-encoding'),
  /** The worker threads that validate large bodies have a full queue (offload.ts). */
  busy: () => new ApiError('ERG_BUSY', 503, 'the API is validating too many large requests at once; retry in a second'),
  /** A body whose validation ran out of time or memory in its worker thread (offload.ts). */
  tooCostly: (what: string, why: string) =>
    new ApiError('ERG_TOO_COSTLY', 422, `the ${what} ${why}, more than erg spends on one request; make it smaller or simpler`),
  /** Postgres cannot be reached now (database-unavailable.ts says which failures mean that); answered with Retry-After. */
  databaseUnavailable: () => new ApiError('ERG_DATABASE_UNAVAILABLE', 503, 'the database cannot be reached now (it may be restarting); retry in a few seconds (see the Retry-After header)'),
  clusterUnavailable: (name: string, why: string) => new ApiError('ERG_CLUSTER_UNAVAILABLE', 503, `cluster "${name}" cannot be reached now: ${why}`),
  /** GET /v1/runs/{id}/logs: the job left something erg does not read where a log belongs (a FIFO, a directory, a symlink…). */
  logUnreadable: (runId: string, why: string) => new ApiError('ERG_LOG_UNREADABLE', 409, `the logs of run ${runId} cannot be read: ${why}`),
  /** GET /v1/runs/{id}/logs: the token or the run's cluster already has as many log reads in flight as allowed. */
  logReadsBusy: (holder: string, limit: number) =>
    new ApiError('ERG_RATE_LIMITED', 429, `${holder} already has ${limit} log reads in flight, the most at once; retry in a second (see the Retry-After header)`),
};
