import { ErgError } from '@erg/spec/errors';
import { ApiError, createApi } from '../src/ui/api';

/** Runs `work` with fetch answering `response`. */
async function withFetch<T>(response: Response, work: () => Promise<T>): Promise<T> {
  const real = globalThis.fetch;
  globalThis.fetch = async () => response;
  try {
    return await work();
  } finally {
    globalThis.fetch = real;
  }
}

describe("the web app's API errors", () => {
  test("carry the answer's status, code and message; retryable comes from erg's catalog", async () => {
    const body = JSON.stringify({ error: { code: 'ERG_NOT_READY', message: 'run r has no telemetry yet' } });
    const err = await withFetch(new Response(body, { status: 409 }), () => createApi('t', () => undefined).get('/v1/runs/r/energy').catch((e: unknown) => e));
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toBeInstanceOf(ErgError);
    expect(err).toMatchObject({ name: 'ApiError', status: 409, code: 'ERG_NOT_READY', message: 'run r has no telemetry yet', retryable: true });
  });

  test("an answer without erg's body is ERG_HTTP with the status line; a 401 signs out", async () => {
    const signedOut: string[] = [];
    const err = await withFetch(new Response('<html>no</html>', { status: 401, statusText: 'Unauthorized' }), () =>
      createApi('t', (message) => signedOut.push(message)).get('/v1/queue').catch((e: unknown) => e),
    );
    expect(err).toMatchObject({ status: 401, code: 'ERG_HTTP', message: '401 Unauthorized', retryable: false });
    expect(signedOut).toEqual(['401 Unauthorized']);
  });
});
