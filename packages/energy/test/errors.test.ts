import { ErgError } from '@erg/spec';
import { EnergyInputError } from '@erg/energy';

describe('EnergyInputError', () => {
  test("is one of erg's errors: its code's catalog entry says 422, not retryable", () => {
    const err = new EnergyInputError('ERG_ENERGY_UNSORTED', 'gpu0: timestamp 5 at index 2 comes after 9; series must be time-sorted');
    expect(err).toBeInstanceOf(ErgError);
    expect(err).toMatchObject({ name: 'EnergyInputError', code: 'ERG_ENERGY_UNSORTED', status: 422, retryable: false });
  });
});
