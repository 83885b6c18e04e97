import { ErgApiError } from '@erg/client';
import { ErgError } from '@erg/spec';

/**
 * Exit codes, the same for every command, so that scripts and CI can branch on them:
 * - OK: success (a regression check passed or improved);
 * - BAD: the thing checked is bad — an invalid spec, a campaign that ended failed or cancelled,
 *   a request the API refused as invalid (4xx other than 401/403/404), a regression;
 * - UNDECIDED: erg could not decide or could not run — an inconclusive verdict, the API
 *   unreachable, authentication failed, not found, a server error, a usage error;
 * - INTERRUPTED: Ctrl-C (128 + SIGINT, the shell's convention).
 */
export const EXIT = { OK: 0, BAD: 1, UNDECIDED: 2, INTERRUPTED: 130 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit codes of a failure, and the code of erg's error catalog each one stands for. */
type FailureExit = Exclude<ExitCode, typeof EXIT.OK>;
const CODE_OF_EXIT = { [EXIT.BAD]: 'ERG_CLI_BAD', [EXIT.UNDECIDED]: 'ERG_CLI_UNDECIDED', [EXIT.INTERRUPTED]: 'ERG_CLI_INTERRUPTED' } as const;

/**
 * An error meant for the person at the terminal: what went wrong (`message`), what to do about
 * it (`hint`), and the exit code, which also gives its code (ERG_CLI_BAD, _UNDECIDED,
 * _INTERRUPTED). Everything a command throws on purpose is a CliError.
 */
export class CliError extends ErgError<(typeof CODE_OF_EXIT)[FailureExit]> {
  override readonly name = 'CliError';

  readonly hint: string | undefined;
  /** Extra lines printed under the message, e.g. one per validation issue. */
  readonly details: readonly string[];
  /** The API's answer, when the error is one. */
  readonly api: { status: number; code: string } | undefined;

  constructor(
    message: string,
    readonly exitCode: FailureExit,
    more: { hint?: string | undefined; details?: readonly string[]; api?: { status: number; code: string } } = {},
  ) {
    super(CODE_OF_EXIT[exitCode], message);
    this.hint = more.hint;
    this.details = more.details ?? [];
    this.api = more.api;
  }
}

/**
 * The error with each API issue about a field that a flag sets followed by that flag —
 * `hostKeySha256: bad (--host-key)` — so the person knows what to change on the command line.
 */
export function withFlagNames(err: CliError, flagOf: Readonly<Record<string, string>>): CliError {
  const details = err.details.map((line) => {
    const flag = flagOf[line.split(':')[0]!];
    return flag ? `${line} (${flag})` : line;
  });
  return new CliError(err.message, err.exitCode, { hint: err.hint, details, api: err.api });
}

/** A usage error: a bad argument or flag value (exit 2). */
export function usageError(message: string, hint?: string): CliError {
  return new CliError(message, EXIT.UNDECIDED, { hint });
}

/** Where the API is and where its settings came from, for messages that must say which to fix. */
export interface ApiTarget {
  apiUrl: string;
  apiUrlSource: string;
  tokenSource: string;
}

/** The cause of a fetch that never got an answer (ECONNREFUSED, ENOTFOUND, a timeout, …). */
function networkCause(err: unknown): string | null {
  // By name, not instanceof: fetch's errors may come from another realm (e.g. under Jest).
  const e = err as { name?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } } | null;
  if (e?.name === 'TimeoutError') return 'no answer in time';
  if (e?.name !== 'TypeError') return null;
  // undici: TypeError('fetch failed') with the socket error (ECONNREFUSED, ENOTFOUND, …) as cause.
  if (typeof e.cause?.code === 'string') return e.cause.code;
  if (typeof e.cause?.message === 'string') return e.cause.message;
  return e.message === 'fetch failed' ? 'connection failed' : null;
}

/**
 * Turns what the API client threw into a CliError with the exit code of the table above and a
 * hint naming the setting to check. Anything unrecognised is returned unchanged.
 */
export function fromApiFailure(err: unknown, target: ApiTarget): unknown {
  if (err instanceof CliError) return err;
  if (err instanceof ErgApiError) {
    const api = { status: err.status, code: err.code };
    const issues = err.issues.map((i) => `${i.path}: ${i.message}`);
    // With issues, the message repeats them all on one line; keep its head ("invalid campaign spec") and list them.
    const summary = issues.length > 0 ? err.message.replace(/:.*$/s, '') : err.message;
    if (err.status === 401 || err.status === 403) {
      return new CliError(`authentication failed (${err.status} ${err.code}): the API at ${target.apiUrl} refused the token`, EXIT.UNDECIDED, {
        api,
        hint: `the token came from ${target.tokenSource}; run \`erg login --api-url ${target.apiUrl}\` with a valid token, or set ERG_TOKEN (\`erg config\` shows what is in use)`,
      });
    }
    if (err.status === 404) {
      return new CliError(err.message, EXIT.UNDECIDED, { api, hint: '`erg campaigns` lists the campaigns, `erg runs CAMPAIGN` their runs, `erg clusters list` the clusters, `erg suites list` the suites' });
    }
    if (err.status >= 500) {
      return new CliError(`the API failed (${err.status} ${err.code}): ${err.message}`, EXIT.UNDECIDED, { api, hint: 'try again; if it persists, look at the API log' });
    }
    return new CliError(`the API refused the request (${err.status} ${err.code}): ${summary}`, EXIT.BAD, { api, details: issues });
  }
  const cause = networkCause(err);
  if (cause !== null) {
    return new CliError(`cannot reach the API at ${target.apiUrl} (${cause})`, EXIT.UNDECIDED, {
      hint: `is it running? The URL came from ${target.apiUrlSource}; change it with --api-url, ERG_API_URL or \`erg login\``,
    });
  }
  return err;
}
