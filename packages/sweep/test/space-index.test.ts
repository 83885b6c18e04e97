// SpaceIndex counts and lists the configurations a space keeps after its excludes without
// testing every configuration against every exclude. Work is asserted in its own steps (a
// count of what it did), never in milliseconds.
import fc from 'fast-check';
import type { ParamValue } from '@erg/spec';
import { ERROR_CATALOG, ErgError } from '@erg/spec/errors';
import { countConfigurations, expandConfigurations, SpaceIndex, SpaceTooComplexError, SPACE_WORK_BUDGET, type ParameterSpace } from '../src';
import { grid } from './arbitraries';
import { naiveConfigurations } from './naive-space';

const space = (s: Partial<ParameterSpace>): ParameterSpace => ({ parameters: {}, zip: [], exclude: [], ...s });
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** A space of up to 4 grid parameters and a zip group, with up to 6 excludes naming 1–3 parameters, each 1 value or a list. */
const smallSpace = grid(4, 4).chain((parameters) => {
  const zip = [{ za: [1, 2, 3], zb: ['x', 'y', 'z'] }];
  const values: Record<string, ParamValue[]> = { ...parameters, ...zip[0] };
  const names = Object.keys(values);
  const entry = fc
    .uniqueArray(fc.constantFrom(...names, 'unknown'), { minLength: 1, maxLength: 3 })
    .chain((chosen) =>
      fc.tuple(
        ...chosen.map((name) => {
          const pool = values[name] ?? [0];
          return fc.tuple(fc.constant(name), fc.oneof(fc.constantFrom(...pool), fc.subarray(pool, { minLength: 1 }), fc.constant(-7)));
        }),
      ),
    )
    .map((pairs) => Object.fromEntries(pairs));
  return fc.record({ parameters: fc.constant(parameters), zip: fc.constant(zip), exclude: fc.array(entry, { maxLength: 6 }) });
});

describe('SpaceIndex against the naive walk (every point × every exclude)', () => {
  it('counts what the naive walk keeps', () => {
    fc.assert(
      fc.property(smallSpace, (s) => {
        expect(countConfigurations(space(s))).toBe(naiveConfigurations(space(s)).length);
      }),
      { numRuns: 300 },
    );
  });

  it('lists the same configurations in the same order', () => {
    fc.assert(
      fc.property(smallSpace, (s) => {
        expect(expandConfigurations(space(s))).toEqual(naiveConfigurations(space(s)));
      }),
      { numRuns: 300 },
    );
  });
});

describe('SpaceIndex on large spaces', () => {
  const cube = { a: range(100), b: range(100), c: range(100) };

  it('counts a 100×100×100 grid with 1,000 single-point excludes in few steps (refused size)', () => {
    const exclude = range(1000).map((i) => ({ a: i % 100, b: Math.floor(i / 100), c: 7 }));
    const index = new SpaceIndex(space({ parameters: cube, exclude }));
    expect(index.count()).toBe(1_000_000 - 1000);
    // The naive check would test 10^6 points × 1,000 boxes.
    expect(index.work).toBeLessThan(20_000);
  });

  it('counts and lists a 100×100×100 grid that 1,000 excludes shrink to 9,002 configurations, walking only those', () => {
    const exclude = [{ a: range(100).slice(10) }, { b: range(100).slice(10) }, ...range(998).map((i) => ({ a: 0, b: 0, c: i % 100, ...(i >= 100 ? { a: 1 + (i % 9) } : {}) }))];
    const index = new SpaceIndex(space({ parameters: cube, exclude }));
    expect(index.count()).toBe(9002);
    let listed = 0;
    let outside = 0;
    index.forEachKept((p) => {
      listed++;
      if (p[0]! >= 10 || p[1]! >= 10) outside++;
    });
    expect([listed, outside]).toEqual([9002, 0]);
    expect(index.work).toBeLessThan(50_000);
  });

  it('counts a 10^12-point space with excludes (12 parameters of 10 values)', () => {
    const parameters = Object.fromEntries(range(12).map((i) => [`p${i}`, range(10)]));
    // Every parameter but p11 pinned to 0..8 by 11 one-parameter excludes: 1 × … × 1 × 10 configurations.
    const exclude = range(11).map((i) => ({ [`p${i}`]: range(9).map((j) => j + 1) }));
    expect(countConfigurations(space({ parameters, exclude }))).toBe(10);
    expect(expandConfigurations(space({ parameters, exclude }))).toHaveLength(10);
  });

  it('refuses excludes whose overlaps exceed the step budget, with an error that says so', () => {
    // 1,000 entries over 20 parameters, each allowing a pseudo-random half of every parameter's
    // values: nearly every prefix leaves a different set of entries matching, so the memo
    // cannot share work.
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const parameters = Object.fromEntries(range(20).map((i) => [`p${i}`, range(10)]));
    const exclude = range(1000).map(() => Object.fromEntries(range(20).map((i) => [`p${i}`, range(10).filter(() => random() < 0.5)]).filter(([, v]) => v.length > 0)));
    const index = new SpaceIndex(space({ parameters, exclude }), 10_000);
    expect(() => index.count()).toThrow(SpaceTooComplexError);
    expect(index.work).toBeLessThanOrEqual(10_000 + 200);
    expect(() => index.count()).toThrow(/too many ways to count the configurations within 10,000 steps/);
  });

  it("refuses with erg's error for it: the catalog's code, a 400 that is not worth retrying", () => {
    const err = new SpaceTooComplexError(5);
    expect(err).toBeInstanceOf(ErgError);
    expect(err).toMatchObject({ name: 'SpaceTooComplexError', code: 'ERG_SWEEP_TOO_COMPLEX', status: 400, retryable: false, budget: 5 });
    expect(ERROR_CATALOG[err.code].surface).toBe('internal');
  });

  it('has a default budget that still counts real campaigns', () => {
    expect(SPACE_WORK_BUDGET).toBeGreaterThanOrEqual(100_000);
  });
});
