import fc from 'fast-check';
import type { ParamValue } from '@erg/spec';
import { configurationKey, countConfigurations, expandConfigurations, expandRuns, type ParameterSpace } from '../src';
import { axesOf } from '../src/axes';
import { grid, identifier } from './arbitraries';

const space = (s: Partial<ParameterSpace>): ParameterSpace => ({ parameters: {}, zip: [], exclude: [], ...s });
const keys = (s: Partial<ParameterSpace>) => expandConfigurations(space(s)).map((c) => c.key);

describe('expandConfigurations', () => {
  it('has one configuration, keyed "default", without parameters', () => {
    expect(expandConfigurations(space({}))).toEqual([{ key: 'default', parameters: {} }]);
  });

  it('varies the last grid parameter fastest', () => {
    expect(expandConfigurations(space({ parameters: { a: [1, 2], b: ['x', 'y', 'z'] } })).map((c) => c.parameters)).toEqual([
      { a: 1, b: 'x' },
      { a: 1, b: 'y' },
      { a: 1, b: 'z' },
      { a: 2, b: 'x' },
      { a: 2, b: 'y' },
      { a: 2, b: 'z' },
    ]);
  });

  it('follows declaration order, not name order', () => {
    expect(keys({ parameters: { z: [1, 2], a: [1, 2] } })).toEqual(['a=1;z=1', 'a=2;z=1', 'a=1;z=2', 'a=2;z=2']);
  });

  it('moves the lists of a zip group together, as one axis after the grid', () => {
    const configs = expandConfigurations(space({ parameters: { o: ['none', 'cpu'] }, zip: [{ mb: [8, 4], seq: [4096, 8192] }] }));
    expect(configs.map((c) => c.parameters)).toEqual([
      { o: 'none', mb: 8, seq: 4096 },
      { o: 'none', mb: 4, seq: 8192 },
      { o: 'cpu', mb: 8, seq: 4096 },
      { o: 'cpu', mb: 4, seq: 8192 },
    ]);
    expect(Object.keys(configs[0]?.parameters ?? {})).toEqual(['o', 'mb', 'seq']);
  });

  it('treats each zip group as its own axis', () => {
    expect(keys({ zip: [{ a: [1, 2] }, { b: [3, 4], c: [5, 6] }] })).toEqual(['a=1;b=3;c=5', 'a=1;b=4;c=6', 'a=2;b=3;c=5', 'a=2;b=4;c=6']);
  });

  it('removes a configuration only when every named parameter matches', () => {
    expect(keys({ parameters: { a: [1, 2], b: [1, 2] }, exclude: [{ a: 1, b: 2 }] })).toEqual(['a=1;b=1', 'a=2;b=1', 'a=2;b=2']);
  });

  it('takes a list in an exclude as "any of these"', () => {
    expect(keys({ parameters: { a: [1, 2, 3], b: [1] }, exclude: [{ a: [1, 3] }] })).toEqual(['a=2;b=1']);
  });

  it('applies every exclude entry', () => {
    expect(keys({ parameters: { a: [1, 2, 3] }, exclude: [{ a: 1 }, { a: 3 }] })).toEqual(['a=2']);
  });

  it('matches exclude values canonically', () => {
    expect(keys({ parameters: { a: [1, 2], f: [true, false] }, exclude: [{ a: '1' }, { f: 'false' }] })).toEqual(['a=2;f=true']);
  });

  it('excludes on zip parameters by position', () => {
    expect(keys({ parameters: { o: ['a', 'b'] }, zip: [{ mb: [8, 4], seq: [1, 2] }], exclude: [{ o: 'a', seq: 2 }] })).toEqual([
      'mb=8;o=a;seq=1',
      'mb=8;o=b;seq=1',
      'mb=4;o=b;seq=2',
    ]);
  });

  it('ignores an exclude that cannot match, or names nothing', () => {
    expect(keys({ parameters: { a: [1, 2] }, exclude: [{ a: 9 }, { nope: 1 }, {}, { a: 1, nope: 1 }] })).toEqual(['a=1', 'a=2']);
  });

  it('does not match an exclude naming two zip lists at positions that never meet', () => {
    expect(keys({ zip: [{ mb: [8, 4], seq: [1, 2] }], exclude: [{ mb: 8, seq: 2 }] })).toEqual(['mb=8;seq=1', 'mb=4;seq=2']);
  });

  it('throws when a zip group has lists of different lengths (an unvalidated spec)', () => {
    expect(() => expandConfigurations(space({ zip: [{ a: [1, 2], b: [1] }] }))).toThrow(RangeError);
  });

  it('gives every configuration its key', () => {
    for (const c of expandConfigurations(space({ parameters: { a: [1, 2] }, zip: [{ b: ['x', 'y'] }] }))) {
      expect(c.key).toBe(configurationKey(c.parameters));
    }
  });

  it('has as many configurations as the product of axis lengths when nothing is excluded', () => {
    fc.assert(
      fc.property(grid(4, 4), fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 2 }), (parameters, zipLengths) => {
        const zip = zipLengths.map((n, i) => ({ [`zip${i}_a`]: Array.from({ length: n }, (_, j) => j), [`zip${i}_b`]: Array.from({ length: n }, (_, j) => `v${j}`) }));
        const s = space({ parameters, zip });
        const product = Object.values(parameters).reduce((p, v) => p * v.length, 1) * zipLengths.reduce((p, n) => p * n, 1);
        expect(expandConfigurations(s)).toHaveLength(product);
        expect(countConfigurations(s)).toBe(product);
      }),
    );
  });

  it('never gives two configurations the same key', () => {
    fc.assert(
      fc.property(grid(4, 5), (parameters) => {
        const configs = expandConfigurations(space({ parameters }));
        expect(new Set(configs.map((c) => c.key)).size).toBe(configs.length);
      }),
    );
  });

  it('gives the same keys whatever the declaration order', () => {
    fc.assert(
      fc.property(grid(4, 3), (parameters) => {
        const reversed = Object.fromEntries(Object.entries(parameters).reverse());
        const sorted = (p: Record<string, ParamValue[]>) => keys({ parameters: p }).sort();
        expect(sorted(reversed)).toEqual(sorted(parameters));
      }),
    );
  });
});

describe('countConfigurations', () => {
  it('agrees with expansion under arbitrary excludes', () => {
    const spaceWithExcludes = grid(4, 4).chain((parameters) => {
      const names = Object.keys(parameters);
      const entry =
        names.length === 0
          ? fc.constant({})
          : fc.dictionary(
              fc.constantFrom(...names, 'unknown'),
              fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constantFrom(...Object.values(parameters).flat())),
              { minKeys: 1, maxKeys: 2 },
            );
      return fc.record({ parameters: fc.constant(parameters), exclude: fc.array(entry, { maxLength: 4 }) });
    });
    fc.assert(
      fc.property(spaceWithExcludes, ({ parameters, exclude }) => {
        const s = space({ parameters, exclude, zip: [{ za: [1, 2], zb: [3, 4] }] });
        expect(countConfigurations(s)).toBe(expandConfigurations(s).length);
      }),
    );
  });

  it('counts a 10^9-point space with excludes without enumerating it', () => {
    const parameters = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`p${i}`, Array.from({ length: 10 }, (_, j) => j)]));
    // p0 ∈ {1} or p1 ∈ {1, 2}: 10^8 + 2·10^8 − 2·10^7 removed.
    expect(countConfigurations(space({ parameters, exclude: [{ p0: 1 }, { p1: [1, 2] }] }))).toBe(1e9 - 2.8e8);
  });

  it('counts excludes over many axes without enumerating the combinations they touch', () => {
    // Each of 8 parameters excluded at 0: 9^8 configurations kept of 10^8, which the former
    // counter refused because the excludes touched 10^8 combinations.
    const parameters = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`p${i}`, Array.from({ length: 10 }, (_, j) => j)]));
    const exclude = Object.keys(parameters).map((name) => ({ [name]: 0 }));
    expect(countConfigurations(space({ parameters, exclude }))).toBe(9 ** 8);
  });
});

describe('axesOf', () => {
  it('lists grid parameters, then zip groups', () => {
    expect(axesOf({ parameters: { a: [1, 2] }, zip: [{ b: [3], c: [4] }] })).toEqual([
      { names: ['a'], tuples: [[1], [2]] },
      { names: ['b', 'c'], tuples: [[3, 4]] },
    ]);
  });
});

describe('expandRuns', () => {
  it('lists repetitions 1..n of each configuration, configuration by configuration', () => {
    expect(expandRuns([{ key: 'a=1' }, { key: 'a=2' }], 2)).toEqual([
      { configKey: 'a=1', repetition: 1 },
      { configKey: 'a=1', repetition: 2 },
      { configKey: 'a=2', repetition: 1 },
      { configKey: 'a=2', repetition: 2 },
    ]);
  });

  it('has configurations × repetitions runs', () => {
    fc.assert(
      fc.property(fc.uniqueArray(identifier, { maxLength: 20 }), fc.integer({ min: 1, max: 10 }), (names, reps) => {
        expect(expandRuns(names.map((key) => ({ key })), reps)).toHaveLength(names.length * reps);
      }),
    );
  });
});
