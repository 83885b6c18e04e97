import { ErgError } from '@erg/spec/errors';

/**
 * The one error @erg/energy throws: the caller handed it something the math cannot be done on.
 * Nothing here is retryable — the same input fails the same way — so the message names the
 * input at fault and what is wrong with it. The codes, their status and retry verdict are in
 * erg's error catalog (packages/spec/src/errors.ts).
 *
 * | code                         | when                                                    |
 * | ---------------------------- | ------------------------------------------------------- |
 * | ERG_ENERGY_BAD_WINDOW        | a window's bounds are not finite, or end is before start |
 * | ERG_ENERGY_LENGTH_MISMATCH   | a series' `t` and `v` differ in length                   |
 * | ERG_ENERGY_UNSORTED          | a series' timestamps decrease                            |
 * | ERG_ENERGY_BAD_ARGUMENT      | any other argument outside its domain                    |
 */
export type EnergyErrorCode =
  | 'ERG_ENERGY_BAD_WINDOW'
  | 'ERG_ENERGY_LENGTH_MISMATCH'
  | 'ERG_ENERGY_UNSORTED'
  | 'ERG_ENERGY_BAD_ARGUMENT';

export class EnergyInputError extends ErgError<EnergyErrorCode> {}
