import { ErgError } from '@erg/spec/errors';

/**
 * The one error @erg/regress throws: the caller handed it samples the statistics cannot be
 * done on. Not retryable — the same input fails the same way — so the message names the
 * sample at fault and what is wrong with it. The codes, their status and retry verdict are in
 * erg's error catalog (packages/spec/src/errors.ts).
 *
 * | code                      | when                                                       |
 * | ------------------------- | ---------------------------------------------------------- |
 * | ERG_REGRESS_BAD_SAMPLE    | a time or energy value is not a finite positive number     |
 * | ERG_REGRESS_TOO_FEW       | a test needs at least two values per side and got fewer    |
 * | ERG_REGRESS_BAD_POLICY    | a policy field is outside its domain                       |
 * | ERG_REGRESS_BAD_ARGUMENT  | any other argument outside its domain                      |
 */
export type RegressErrorCode = 'ERG_REGRESS_BAD_SAMPLE' | 'ERG_REGRESS_TOO_FEW' | 'ERG_REGRESS_BAD_POLICY' | 'ERG_REGRESS_BAD_ARGUMENT';

export class RegressInputError extends ErgError<RegressErrorCode> {}
