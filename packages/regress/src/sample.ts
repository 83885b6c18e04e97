import { RegressInputError } from './errors';

/** Throws unless every value is a finite number; `what` names the sample in the message. */
export function requireFinite(xs: readonly number[], what: string): void {
  const i = xs.findIndex((x) => typeof x !== 'number' || !Number.isFinite(x));
  if (i >= 0) throw new RegressInputError('ERG_REGRESS_BAD_SAMPLE', `${what}[${i}] must be a finite number, got ${String(xs[i])}`);
}
