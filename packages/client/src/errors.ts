import { ErgError } from '@erg/spec/errors';
import type { components } from './generated/api';

/** The body of every API error response. */
export type ErrorBody = components['schemas']['Error'];
/** One validation problem: which field (`path`, dotted) and what is wrong with it. */
export type ErrorIssue = NonNullable<ErrorBody['error']['issues']>[number];

/**
 * A non-2xx answer from the API, carrying its error code (`ERG_*`) and, for a request that
 * failed validation, the issues per field. The client's view of an answer: its code may be one
 * this client's catalog does not know (a newer API's), and its status is the one answered;
 * `retryable` comes from the catalog (false for a code it does not know).
 */
export class ErgApiError extends ErgError<string> {
  override readonly name = 'ErgApiError';
  declare readonly status: number;

  constructor(
    status: number,
    code: string,
    message: string,
    readonly issues: ErrorIssue[] = [],
  ) {
    super(code, message, { status });
  }

  /** Reads the API's `{ error: { code, message, issues? } }` body; any other body becomes ERG_HTTP_<status>. */
  static fromBody(status: number, body: unknown): ErgApiError {
    const error = (body as Partial<ErrorBody> | null)?.error;
    if (error && typeof error.code === 'string' && typeof error.message === 'string') {
      return new ErgApiError(status, error.code, error.message, error.issues ?? []);
    }
    const text = typeof body === 'string' && body.length > 0 ? `: ${body.slice(0, 200)}` : '';
    return new ErgApiError(status, `ERG_HTTP_${status}`, `the API answered ${status}${text}`);
  }
}
