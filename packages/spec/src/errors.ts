/**
 * erg's errors: one catalog of every code erg throws or answers with, and ErgError, the base
 * class of every error erg throws on purpose. docs/api.md's error tables are generated from the
 * catalog (`node scripts/generate-error-docs.js`); a test fails when they differ, and another when
 * a source spells out an `ERG_*` code the catalog does not list.
 *
 * Glossary
 * - code: stable and machine-readable (`ERG_SSH_TIMEOUT`); API bodies, logs, the CLI and tests
 *   match on it. A message may be reworded, a code is not.
 * - message: for a person: it names the thing at fault and what to do about it. Made where the
 *   error is thrown, since only that place knows the thing.
 * - status: the HTTP status the API answers with the code. A code that never reaches HTTP has the
 *   status the API would answer if it did: 502 the cluster (or a webhook's receiver) answered, but
 *   not usably; 503 it cannot be reached now; 504 a remote command ran past its deadline; 422 an
 *   input the code cannot work on (a value the renderer refuses, a series the energy math cannot
 *   integrate); 409 a state that forbids it now; 500 erg's own configuration or stored data is at
 *   fault. Null where no HTTP status fits: the CLI's and the agent's errors (neither serves HTTP)
 *   and the client's view of an answer that is not erg's (its status is the answer's). The API
 *   answers only with ApiError (apps/api); any other error reaching it is a 500 ERG_INTERNAL.
 * - retryable: the same operation, repeated unchanged later, can succeed — the cause passes by
 *   itself (a restarting slurmctld, a dropped connection, a rate limit that refills). Not
 *   retryable: someone must change something first (the request, a key, the configuration).
 * - surface: where a person meets the code. `response`: the API's error bodies
 *   (`{ error: { code, message, issues? } }`). `internal`: thrown inside erg — logs, and the
 *   message as a run's or a cluster's reason. `client`: made by the CLI or a client of the API.
 *
 * It imports nothing: the web app bundles this file alone (`@erg/spec/errors`), without zod.
 */

export interface ErrorDefinition {
  readonly status: number | null;
  /** Other statuses the same code is answered with; a call site may pick one of these, no other. */
  readonly alsoStatus?: readonly number[];
  readonly retryable: boolean;
  readonly surface: 'response' | 'internal' | 'client';
  /** What the code means, in one sentence (docs/api.md's tables show it). */
  readonly meaning: string;
}

export const ERROR_CATALOG = {
  // ── The API's answers (apps/api/src/errors.ts makes them) ──
  ERG_VALIDATION: {
    status: 400, retryable: false, surface: 'response',
    meaning: 'a campaign spec, suite, request body, path parameter or query string is invalid (including a malformed id: `not an id (expected a UUID)`); `issues` lists every problem',
  },
  ERG_BAD_URL: {
    status: 400, alsoStatus: [414], retryable: false, surface: 'response',
    meaning: 'the router refused the URL before any route saw it: 414 for a path segment too long, 400 for one that is not valid percent-encoding',
  },
  ERG_BAD_REQUEST: {
    status: 400, retryable: false, surface: 'response',
    meaning: "a client error of Fastify's that has no code of its own, answered with Fastify's status and message",
  },
  FST_ERR_CTP_INVALID_JSON_BODY: {
    status: 400, retryable: false, surface: 'response',
    meaning: "Fastify's: `Content-Type: application/json` with a body that is not JSON (a key `__proto__`, `constructor` or `prototype` is `ERG_VALIDATION` at its path)",
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400, retryable: false, surface: 'response',
    meaning: "Fastify's: `Content-Type: application/json` with an empty body (e.g. a `POST …/cancel` sent with that header)",
  },
  ERG_UNAUTHORIZED: {
    status: 401, retryable: false, surface: 'response',
    meaning: 'missing or invalid bearer token (or, on `GET /metrics`, metrics token)',
  },
  ERG_FORBIDDEN: {
    status: 403, retryable: false, surface: 'response',
    meaning: "the caller lacks the role the request needs, or a run token was used for anything but its own run's telemetry",
  },
  ERG_TOKEN_WIDER: {
    status: 403, retryable: false, surface: 'response',
    meaning: "`POST /v1/tokens` asked for a token beyond the calling token's bounds; one issue per bound exceeded",
  },
  ERG_NOT_FOUND: {
    status: 404, retryable: false, surface: 'response',
    meaning: 'no such campaign, run, cluster, suite or token (`campaign "…" not found`), or no such route (`no route GET /v1/nope`)',
  },
  ERG_CONFLICT: {
    status: 409, retryable: false, surface: 'response',
    meaning: 'the name is taken (a cluster, a project, a user), or the change conflicts with what exists',
  },
  ERG_DEACTIVATED: {
    status: 409, retryable: false, surface: 'response',
    meaning: 'the project or cluster the request would start work in is deactivated: its history stays readable, but nothing new starts in it until it is reactivated (`POST /v1/projects/{name}/reactivate`, `POST /v1/clusters/{name}/reactivate`)',
  },
  ERG_NOT_READY: {
    status: 409, retryable: true, surface: 'response',
    meaning: '`GET /v1/runs/{id}/energy` before the run has a workload window and telemetry; ask again once it has',
  },
  ERG_LOG_UNREADABLE: {
    status: 409, retryable: false, surface: 'response',
    meaning: '`GET /v1/runs/{id}/logs` of a run whose job left something other than a regular file where a log belongs',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: {
    status: 413, retryable: false, surface: 'response',
    meaning: "the body is larger than the route's limit; the message names the limit and the route",
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415, retryable: false, surface: 'response',
    meaning: "Fastify's: a body with a content type the API does not parse, or a body without `Content-Type`",
  },
  ERG_UNKNOWN_CLUSTER: {
    status: 422, retryable: false, surface: 'response',
    meaning: 'a valid spec or suite names a cluster that is not registered (or that the caller cannot see); one issue at its path, code `unknown_cluster`',
  },
  ERG_POWER_UNSUPPORTED: {
    status: 422, retryable: false, surface: 'response',
    meaning: "a campaign sets a `power` state its cluster cannot set: the scheduler's probe found no node helper there, or the helper does not allow a knob; one issue at `power`, code `power_unsupported`",
  },
  ERG_CLUSTER_NOT_PROBED: {
    status: 409, retryable: true, surface: 'response',
    meaning: 'a campaign sets a `power` state on a cluster the scheduler has not reached yet, so whether it can be set is not known; the scheduler probes a cluster within a cycle of its registration: retry (`Retry-After`)',
  },
  ERG_UNKNOWN_CAMPAIGN: {
    status: 422, retryable: false, surface: 'response',
    meaning: "a suite's pinned baseline names a campaign that does not exist in the suite's project; one issue at `baseline.campaignId`",
  },
  ERG_SUITE_UNKNOWN_CLUSTER: {
    status: 422, retryable: false, surface: 'response',
    meaning: "a suite's cluster is no longer registered, so it cannot be triggered",
  },
  ERG_SUITE_TEMPLATE_INVALID: {
    status: 422, retryable: false, surface: 'response',
    meaning: "a suite's stored campaign template no longer makes a valid campaign, so it cannot be triggered",
  },
  ERG_SUITE_BASELINE_MISSING: {
    status: 422, retryable: false, surface: 'response',
    meaning: "a suite pins a baseline campaign that no longer exists, so it cannot be triggered until its baseline is updated",
  },
  ERG_TOO_COSTLY: {
    status: 422, retryable: false, surface: 'response',
    meaning: 'a large body took more time (`ERG_OFFLOAD_TIMEOUT_MS`) or memory (`ERG_OFFLOAD_HEAP_MB`) to validate, or a campaign\'s results more (`ERG_RESULTS_TIMEOUT_MS`, `ERG_RESULTS_HEAP_MB`) to compute, than erg spends on one request',
  },
  ERG_RATE_LIMITED: {
    status: 429, retryable: true, surface: 'response',
    meaning: 'too many changes, telemetry batches or expensive reads this minute with this token or by this user, or more log reads, results computations or evidence bundles in flight than allowed; see `Retry-After`',
  },
  ERG_INTERNAL: {
    status: 500, retryable: false, surface: 'response',
    meaning: 'an unexpected failure, a bug: the message is `internal error; see the API log`',
  },
  ERG_BUSY: {
    status: 503, retryable: true, surface: 'response',
    meaning: '`ERG_OFFLOAD_QUEUE` large bodies are already waiting to be validated, or `ERG_RESULTS_QUEUE` campaigns\' results to be computed; retry in a second',
  },
  ERG_DATABASE_UNAVAILABLE: {
    status: 503, retryable: true, surface: 'response',
    meaning: 'Postgres cannot be reached now (it may be restarting); see `Retry-After`',
  },
  ERG_CLUSTER_UNAVAILABLE: {
    status: 503, retryable: true, surface: 'response',
    meaning: '`GET /v1/runs/{id}/logs` cannot reach the cluster and the run has no stored logs yet',
  },

  // ── The API's own failures it turns into an answer ──
  ERG_HOST_KEY_UNKNOWN: {
    status: 503, retryable: true, surface: 'internal',
    meaning: "the API will not connect to a trust-on-first-use cluster before the scheduler has pinned its host key (answered as `ERG_CLUSTER_UNAVAILABLE`)",
  },
  ERG_NAME_TAKEN: {
    status: 409, retryable: false, surface: 'internal',
    meaning: '@erg/db: a project or user with that name exists (answered as `ERG_CONFLICT`)',
  },
  ERG_CLUSTER_EXISTS: {
    status: 409, retryable: false, surface: 'internal',
    meaning: '@erg/db: a cluster with that name exists (answered as `ERG_CONFLICT`)',
  },
  ERG_STORED_SPEC_INVALID: {
    status: 500, retryable: false, surface: 'internal',
    meaning: "@erg/db: a campaign's stored spec no longer parses as a campaign spec (a row stored before a schema change no stored-spec migration covers, packages/db/src/stored-spec.ts); the message names the campaign and the fields at fault; what reads it fails rather than use defaults (the API answers `ERG_INTERNAL`, the scheduler logs it with the campaign and tries again)",
  },

  // ── @erg/spec ──
  template_error: {
    status: 400, retryable: false, surface: 'internal',
    meaning: 'a file template has bad placeholder syntax, a placeholder without a value, or a value that is not safe in a script',
  },
  invalid_slurm_time: {
    status: 400, retryable: false, surface: 'internal',
    meaning: 'a text is not a Slurm time limit (minutes, MM:SS, HH:MM:SS or D-HH:MM:SS); also the code of the spec issue it becomes',
  },

  // ── @erg/sweep ──
  ERG_SWEEP_TOO_COMPLEX: {
    status: 400, retryable: false, surface: 'internal',
    meaning: "a campaign's excludes overlap in too many ways to count its configurations within the step budget (`SPACE_WORK_BUDGET`); answered as the spec issue `exclude_too_complex`",
  },

  // ── @erg/slurm: rendering a run's files and Slurm commands ──
  ERG_SLURM_UNSAFE_DIRECTIVE_VALUE: {
    status: 422, retryable: false, surface: 'internal',
    meaning: 'a value bound for an `#SBATCH` line contains whitespace, a quote, `$`, a backquote, `;` or `#`',
  },
  ERG_SLURM_UNSAFE_PARAMETER_VALUE: {
    status: 422, retryable: false, surface: 'internal',
    meaning: 'a parameter value is not allowed in a rendered script (letters, digits and `. _ , : = + / @ % ^ -` only, 1 to 256 characters)',
  },
  ERG_SLURM_INVALID_RENDER_INPUT: {
    status: 422, retryable: false, surface: 'internal',
    meaning: "something other than a value is malformed for rendering: a run directory, a file name, a parameter name, an option key",
  },
  ERG_SLURM_UNQUOTABLE_VALUE: {
    status: 422, retryable: false, surface: 'internal',
    meaning: 'a string with a NUL byte cannot be shell-quoted',
  },
  ERG_SLURM_INVALID_COMMAND_INPUT: {
    status: 422, retryable: false, surface: 'internal',
    meaning: 'a Slurm command builder was given an argument it will not put on a command line (a bad job id, a path)',
  },
  ERG_SLURM_PARSE: {
    status: 502, retryable: false, surface: 'internal',
    meaning: 'the output of sbatch, squeue or sacct did not have the shape erg asked for',
  },
  ERG_SLURM_COMMAND_FAILED: {
    status: 502, retryable: true, surface: 'internal',
    meaning: 'a Slurm command exited non-zero, usually a busy or restarting slurmctld',
  },

  // ── @erg/slurm: the SSH connection to a cluster ──
  ERG_SSH_HOST_KEY_MISMATCH: {
    status: 502, retryable: false, surface: 'internal',
    meaning: "the cluster presented a host key other than the pinned one (possibly a man in the middle); erg refused to connect",
  },
  ERG_SSH_UNREACHABLE: {
    status: 503, retryable: true, surface: 'internal',
    meaning: 'TCP refused, DNS failure, network timeout or handshake failure: the cluster cannot be reached now',
  },
  ERG_SSH_ADDRESS_NOT_ALLOWED: {
    status: 422, retryable: false, surface: 'internal',
    meaning: "the cluster's login node (or first jump host) is, or resolves to, an internal address (loopback, private, link-local, …) that the project's cluster policy does not allow; erg did not connect (PUT /v1/projects/{name}/cluster-policy, admins)",
  },
  ERG_SSH_AUTH: {
    status: 502, retryable: false, surface: 'internal',
    meaning: "the cluster rejected erg's key, or the key is unusable, until someone fixes it",
  },
  ERG_SSH_CONNECTION_LOST: {
    status: 503, retryable: true, surface: 'internal',
    meaning: 'the connection dropped while an operation was in flight; the next call reconnects',
  },
  ERG_SSH_CHANNEL_REFUSED: {
    status: 503, retryable: true, surface: 'internal',
    meaning: 'the cluster refused to open an SSH channel (session limit, resource shortage)',
  },
  ERG_SSH_CHANNEL_FAILED: {
    status: 502, retryable: true, surface: 'internal',
    meaning: "an open SSH channel failed mid-command; the command's outcome is unknown",
  },
  ERG_SSH_TIMEOUT: {
    status: 504, retryable: true, surface: 'internal',
    meaning: 'a remote command ran past its deadline and was abandoned; it may have had its effect, so a non-idempotent one is looked at before it is retried',
  },
  ERG_SSH_OUTPUT_TOO_LARGE: {
    status: 502, retryable: false, surface: 'internal',
    meaning: "a remote command printed more than the caller's limit; the channel was closed",
  },
  ERG_SSH_SFTP: {
    status: 502, retryable: false, surface: 'internal',
    meaning: 'an SFTP request failed for a reason other than a missing file (permissions, disk full)',
  },
  ERG_SSH_CLOSED: {
    status: 503, retryable: false, surface: 'internal',
    meaning: 'the connection was closed by erg; it accepts no further operations',
  },
  ERG_SSH_READ_FAILED: {
    status: 502, retryable: true, surface: 'internal',
    meaning: "reading a run directory's file failed on the cluster for a reason that is not the file's (a missing tool, an I/O error)",
  },
  ERG_SSH_CERTIFICATE_EXPIRED: {
    status: 502, retryable: false, surface: 'internal',
    meaning: "the OpenSSH certificate erg logs in with (the cluster's, or a jump host's) has expired; erg does not connect, and the cluster's runs wait, until it is rotated (PUT /v1/clusters/{name}/credentials)",
  },
  ERG_JOB_FILE_REFUSED: {
    status: 409, retryable: false, surface: 'internal',
    meaning: "a job left something erg does not read where a file of its run directory belongs (a FIFO, a sparse file, a symbolic link); the run's failure, never the cluster's",
  },

  // ── @erg/secrets ──
  ERG_SECRET_MALFORMED: {
    status: 500, retryable: false, surface: 'internal',
    meaning: 'a stored secret is not a sealed value (`erg1:<key id>:<iv>:<ciphertext>`), or is truncated or not base64',
  },
  ERG_SECRET_UNKNOWN_KEY: {
    status: 500, retryable: false, surface: 'internal',
    meaning: 'a stored secret was sealed with a key this process does not have (during a rotation, start it with `ERG_SECRET_KEY_PREVIOUS`)',
  },
  ERG_SECRET_UNREADABLE: {
    status: 500, retryable: false, surface: 'internal',
    meaning: 'a stored secret does not authenticate: it was altered, or sealed for another row',
  },
  ERG_SECRET_BAD_KEY: {
    status: 500, retryable: false, surface: 'internal',
    meaning: 'no secret key is configured, its file cannot be read, or it is not base64 of 32 bytes',
  },

  // ── @erg/queue ──
  ERG_REDIS_UNAVAILABLE: {
    status: 503, retryable: true, surface: 'internal',
    meaning: 'Redis did not answer within the deadline of an operation that is only a hint; Postgres stays the truth',
  },

  // ── @erg/suites ──
  ERG_WEBHOOK_REFUSED: {
    status: 502, retryable: false, surface: 'internal',
    meaning: "a suite's webhook delivery failed for good: the receiver answered 4xx (other than 408 or 429), or the project's webhook policy refuses the URL",
  },
  ERG_WEBHOOK_FAILED: {
    status: 502, retryable: true, surface: 'internal',
    meaning: "a suite's webhook delivery failed this time (5xx, 408, 429, refused, timed out, not resolved); the delivery is tried again",
  },

  // ── @erg/energy and @erg/regress: the pure math, given input it cannot work on ──
  ERG_ENERGY_BAD_WINDOW: {
    status: 422, retryable: false, surface: 'internal',
    meaning: "a window's bounds are not finite, or its end is before its start",
  },
  ERG_ENERGY_LENGTH_MISMATCH: {
    status: 422, retryable: false, surface: 'internal',
    meaning: "a series' `t` and `v` differ in length",
  },
  ERG_ENERGY_UNSORTED: {
    status: 422, retryable: false, surface: 'internal',
    meaning: "a series' timestamps decrease",
  },
  ERG_ENERGY_BAD_ARGUMENT: {
    status: 422, retryable: false, surface: 'internal',
    meaning: 'an argument of the energy math is outside its domain',
  },
  ERG_FIGURES_NOT_FINITE: {
    status: 500, retryable: false, surface: 'internal',
    meaning: "@erg/results: a run's computed figures hold a number that is not finite (Infinity, NaN); they are not stored (JSON and the API's answers have no such numbers) and the message names the paths; erg's inputs are bounded so that this cannot happen, so it is a bug to report",
  },
  ERG_REGRESS_BAD_SAMPLE: {
    status: 422, retryable: false, surface: 'internal',
    meaning: 'a time or energy value is not a finite positive number',
  },
  ERG_REGRESS_TOO_FEW: {
    status: 422, retryable: false, surface: 'internal',
    meaning: 'a statistical test needs at least two values per side and got fewer',
  },
  ERG_REGRESS_BAD_POLICY: {
    status: 422, retryable: false, surface: 'internal',
    meaning: 'a regression policy field is outside its domain',
  },
  ERG_REGRESS_BAD_ARGUMENT: {
    status: 422, retryable: false, surface: 'internal',
    meaning: 'an argument of the regression statistics is outside its domain',
  },

  // ── The scheduler ──
  ERG_LEASE_LOST: {
    status: 409, retryable: false, surface: 'internal',
    meaning: "a newer lease of the cluster exists, so this cycle stopped and leaves what it claimed to the newer one; never a cluster's failure",
  },
  ERG_ENERGY_REFRESH_FAILED: {
    status: 500, retryable: true, surface: 'internal',
    meaning: "computing a run's energy failed in the scheduler's energy worker (the database, its heap limit `ERG_ENERGY_HEAP_MB`); the run stays due and the next tick tries again",
  },
  ERG_REGEX_BUDGET_EXCEEDED: {
    status: 422, retryable: false, surface: 'internal',
    meaning: "a campaign's metric or phase regular expression ran past its own time budget (`ERG_METRIC_REGEX_BUDGET_MS`) and was stopped",
  },
  ERG_REGEX_TASK_FAILED: {
    status: 500, retryable: false, surface: 'internal',
    meaning: 'a regular expression task failed in its worker thread for a reason other than its budget (a stored regex RE2 refuses, the worker out of memory)',
  },

  // ── The telemetry agent (runs on compute nodes; serves no HTTP) ──
  ERG_AGENT_CONFIG: {
    status: null, retryable: false, surface: 'internal',
    meaning: "the agent's command line or environment is not one it can run with",
  },
  ERG_AGENT_START: {
    status: null, retryable: false, surface: 'internal',
    meaning: 'the agent cannot start: nothing to sample, an unreadable token, …',
  },

  // ── Clients of the API ──
  ERG_HTTP: {
    status: null, retryable: false, surface: 'client',
    meaning: "the API's address answered without erg's error body (a proxy's page, say); @erg/client appends the status (`ERG_HTTP_<status>`), the web app does not",
  },
  ERG_CLI_BAD: {
    status: null, retryable: false, surface: 'client',
    meaning: 'the CLI found the thing checked bad (an invalid spec, a campaign that ended failed, a request the API refused, a regression): exit 1',
  },
  ERG_CLI_UNDECIDED: {
    status: null, retryable: false, surface: 'client',
    meaning: 'the CLI could not decide or could not run (an inconclusive verdict, the API unreachable, authentication failed, a usage error): exit 2; the hint says what to do',
  },
  ERG_CLI_INTERRUPTED: {
    status: null, retryable: true, surface: 'client',
    meaning: 'the CLI stopped waiting (Ctrl-C); what it waited for goes on: exit 130',
  },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

/** The codes the API may answer with: ApiError accepts no other. */
export type ResponseErrorCode = { [C in ErrorCode]: (typeof ERROR_CATALOG)[C]['surface'] extends 'response' ? C : never }[ErrorCode];

/** The statuses a code may be answered with: its catalog status and its `alsoStatus`. */
export type ErrorStatus<C extends string> = C extends ErrorCode
  ? Exclude<(typeof ERROR_CATALOG)[C]['status'], null> | ((typeof ERROR_CATALOG)[C] extends { alsoStatus: readonly (infer S)[] } ? S : never)
  : number;

/** The catalog's entry for a code, undefined for one it does not know (an answer of a newer API, say). */
export function errorDefinition(code: string): ErrorDefinition | undefined {
  return Object.hasOwn(ERROR_CATALOG, code) ? (ERROR_CATALOG as Record<string, ErrorDefinition>)[code] : undefined;
}

export interface ErgErrorOptions<C extends string> {
  /** One of the code's other statuses (`alsoStatus`); the catalog's status when absent. */
  status?: ErrorStatus<C>;
  cause?: unknown;
}

/**
 * The base class of every error erg throws on purpose. `status` and `retryable` come from the
 * catalog, never from the thrower, so no call site can contradict it. C is the code's type: a
 * catalog code for erg's own errors; `string` only for a client's view of an API answer, whose
 * code may be one this catalog does not know (then not retryable, and the answer's status).
 */
export class ErgError<C extends string = ErrorCode> extends Error {
  readonly code: C;
  /** The HTTP status (see the glossary); null where none fits. */
  readonly status: number | null;

  constructor(code: C, message: string, options: ErgErrorOptions<C> = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = options.status ?? errorDefinition(code)?.status ?? null;
  }

  /** Whether the same operation, repeated unchanged later, can succeed (see the glossary). */
  get retryable(): boolean {
    return errorDefinition(this.code)?.retryable ?? false;
  }
}
