import { welch as welchTest, type WelchResult } from '@erg/energy';
import { RegressInputError } from './errors';
import { requireFinite } from './sample';

export type { WelchResult } from '@erg/energy';

/**
 * Welch's t-test of mean(a) − mean(b) (@erg/energy's, which the campaign's claims use too); both
 * samples need at least two finite values, else a RegressInputError that names the sample.
 */
export function welch(a: readonly number[], b: readonly number[]): WelchResult {
  requireFinite(a, 'a');
  requireFinite(b, 'b');
  if (a.length < 2 || b.length < 2)
    throw new RegressInputError('ERG_REGRESS_TOO_FEW', `Welch's test needs at least 2 values per sample, got ${a.length} and ${b.length}`);
  return welchTest(a, b);
}
