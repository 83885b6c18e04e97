import { ErgError } from '@erg/spec';
import { SuiteError, WebhookError } from '@erg/suites';

describe("the suites' errors", () => {
  test("a SuiteError is one of erg's errors, answered 422 and not retryable", () => {
    const err = new SuiteError('ERG_SUITE_BASELINE_MISSING', 'suite "s" pins a baseline campaign that no longer exists', { campaignId: 'c' });
    expect(err).toBeInstanceOf(ErgError);
    expect(err).toMatchObject({ name: 'SuiteError', code: 'ERG_SUITE_BASELINE_MISSING', status: 422, retryable: false, details: { campaignId: 'c' } });
  });

  test('a permanent webhook failure is ERG_WEBHOOK_REFUSED, not retryable; any other ERG_WEBHOOK_FAILED, retryable', () => {
    const refused = new WebhookError({ kind: 'status', status: 404 }, 'POST https://h/x answered 404', true);
    expect(refused).toMatchObject({ code: 'ERG_WEBHOOK_REFUSED', retryable: false, permanent: true, message: 'delivery failed (status 404)' });
    const failed = new WebhookError({ kind: 'refused' }, 'POST https://h/x: ECONNREFUSED', false);
    expect(failed).toMatchObject({ code: 'ERG_WEBHOOK_FAILED', retryable: true, permanent: false, message: 'delivery failed (connection refused)' });
    expect(failed).toBeInstanceOf(ErgError);
  });
});
