import fc from 'fast-check';
import { SAFE_VALUE, TEMPLATE_BUILTINS, type ParamValue } from '@erg/spec';

const builtins: readonly string[] = TEMPLATE_BUILTINS;

/** Parameter names as the spec allows them (zod drops a `__proto__` key, so it never reaches expansion). */
export const identifier = fc
  .stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/)
  .filter((name) => name !== '__proto__' && !builtins.includes(name));

export const paramValue: fc.Arbitrary<ParamValue> = fc.oneof(
  fc.integer({ min: -1000, max: 100_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.stringMatching(SAFE_VALUE).map((s) => s.slice(0, 12) || 'x'),
);

/** A list of values distinct by canonical string, as a valid spec's axis is. */
export const axisValues = (maxLength: number) =>
  fc.uniqueArray(paramValue, { minLength: 1, maxLength, selector: (v) => (typeof v === 'string' ? v : String(v)) });

/** A grid: up to `maxParams` parameters with up to `maxValues` values each. */
export const grid = (maxParams: number, maxValues: number) =>
  fc.dictionary(identifier, axisValues(maxValues), { minKeys: 0, maxKeys: maxParams });
