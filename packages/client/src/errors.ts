import type { components } from './generated/api';

/** The body of every API error response. */
export type ErrorBody = components['schemas']['Error'];
/** One validation problem: which field (`path`, dotted) and what is wrong with it. */
export type ErrorIssue = NonNullable<ErrorBody['error']['issues']>[number];

/**
 * A non-2xx answer from the API, carrying its error code (`ERG_*`) and, for a request that
 * failed validation, the issues per field.
 */
export class ErgApiError extends Error {
  override readonly name = 'ErgApiError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: ErrorIssue[] = [],
  ) {
    super(message);
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
