// Plain fetch against the API with `Authorization: Bearer <token>`. A 401 anywhere signs the user
// out (the App returns to the sign-in form with a message); other errors carry the API's code and
// message.
import { ErgError } from '@erg/spec/errors';

/**
 * The web app's view of an API error answer: the status answered, the code (ERG_HTTP for an answer
 * without erg's error body) and the message; `retryable` comes from erg's error catalog.
 */
export class ApiError extends ErgError<string> {
  // Named here: the production bundle renames classes.
  override readonly name = 'ApiError';
  declare readonly status: number;

  constructor(status: number, code: string, message: string) {
    super(code, message, { status });
  }
}

export interface Api {
  token: string;
  get<T>(path: string, init?: { signal?: AbortSignal }): Promise<T>;
}

export function createApi(token: string, onUnauthorized: (message: string) => void): Api {
  return {
    token,
    async get<T>(path: string, init: { signal?: AbortSignal } = {}): Promise<T> {
      const res = await fetch(path, { headers: { authorization: `Bearer ${token}` }, signal: init.signal });
      if (res.ok) return (await res.json()) as T;
      let code = 'ERG_HTTP';
      let message = `${res.status} ${res.statusText}`;
      try {
        const body = (await res.json()) as { error?: { code?: string; message?: string } };
        code = body.error?.code ?? code;
        message = body.error?.message ?? message;
      } catch {
        // not JSON: keep the status line
      }
      if (res.status === 401) onUnauthorized(message);
      throw new ApiError(res.status, code, message);
    },
  };
}

/** Checks a token against the API (GET /v1/clusters); resolves to an error message or null. */
export async function checkToken(token: string): Promise<string | null> {
  try {
    const res = await fetch('/v1/clusters', { headers: { authorization: `Bearer ${token}` } });
    if (res.ok) return null;
    if (res.status === 401) return 'The API refused this token (401). Check it and try again.';
    return `The API answered ${res.status}.`;
  } catch (e) {
    return `The API cannot be reached: ${(e as Error).message}`;
  }
}
