import { ErgError } from '@erg/spec';
import { RegressInputError } from '@erg/regress';

describe('RegressInputError', () => {
  test("is one of erg's errors: its code's catalog entry says 422, not retryable", () => {
    const err = new RegressInputError('ERG_REGRESS_TOO_FEW', 'the baseline has 1 value; a test needs at least 2 per side');
    expect(err).toBeInstanceOf(ErgError);
    expect(err).toMatchObject({ name: 'RegressInputError', code: 'ERG_REGRESS_TOO_FEW', status: 422, retryable: false });
  });
});
