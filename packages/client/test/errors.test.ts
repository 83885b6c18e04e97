import { ErgError } from '@erg/spec';
import { ErgApiError } from '../src';

describe("ErgApiError, the client's view of an error answer", () => {
  test("keeps the answer's status, code, message and issues; retryable comes from erg's catalog", () => {
    const limited = ErgApiError.fromBody(429, { error: { code: 'ERG_RATE_LIMITED', message: 'too many changes with this token: …' } });
    expect(limited).toBeInstanceOf(ErgError);
    expect(limited).toMatchObject({ name: 'ErgApiError', status: 429, code: 'ERG_RATE_LIMITED', retryable: true, issues: [] });
    const invalid = ErgApiError.fromBody(400, { error: { code: 'ERG_VALIDATION', message: 'invalid request body: port: too big', issues: [{ path: 'port', code: 'too_big', message: 'too big' }] } });
    expect(invalid).toMatchObject({ status: 400, retryable: false, issues: [{ path: 'port', code: 'too_big', message: 'too big' }] });
  });

  test('an answer without erg\'s body is ERG_HTTP_<status>; a code the catalog does not know is not retryable', () => {
    expect(ErgApiError.fromBody(502, '<html>Bad Gateway</html>')).toMatchObject({ status: 502, code: 'ERG_HTTP_502', retryable: false, message: 'the API answered 502: <html>Bad Gateway</html>' });
    expect(new ErgApiError(418, 'ERG_FROM_A_NEWER_API', 'new')).toMatchObject({ status: 418, retryable: false });
  });
});
