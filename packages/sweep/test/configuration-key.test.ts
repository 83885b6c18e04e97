import fc from 'fast-check';
import { canonicalValue, type ParamValue } from '@erg/spec';
import { configurationKey, DEFAULT_CONFIGURATION_KEY, parseConfigurationKey } from '../src';
import { identifier, paramValue } from './arbitraries';

describe('configurationKey', () => {
  it('joins name=value pairs, names sorted, with ;', () => {
    expect(configurationKey({ sp: 2, offload: 'cpu', mb: 8 })).toBe('mb=8;offload=cpu;sp=2');
  });

  it('sorts by code unit: upper case before _ before lower case', () => {
    expect(configurationKey({ b: 1, _x: 2, B: 3, a: 4 })).toBe('B=3;_x=2;a=4;b=1');
  });

  it('writes canonical values, so 1, 1.0 and "1" give the same key', () => {
    expect(configurationKey({ a: 1 })).toBe(configurationKey({ a: '1' }));
    expect(configurationKey({ a: 1.0, b: true, c: 0.5 })).toBe('a=1;b=true;c=0.5');
  });

  it('keeps = inside values unambiguous, because names cannot contain =', () => {
    expect(configurationKey({ opt: 'a=b' })).toBe('opt=a=b');
    expect(parseConfigurationKey('opt=a=b')).toEqual({ opt: 'a=b' });
  });

  it('is "default" for no parameters', () => {
    expect(configurationKey({})).toBe(DEFAULT_CONFIGURATION_KEY);
    expect(DEFAULT_CONFIGURATION_KEY).toBe('default');
  });

  it('does not depend on declaration order', () => {
    fc.assert(
      fc.property(fc.dictionary(identifier, paramValue, { minKeys: 1, maxKeys: 8 }), fc.integer(), (params, seed) => {
        const entries = Object.entries(params);
        // A deterministic shuffle driven by the seed.
        const shuffled = entries
          .map((e, i) => [e, Math.sin(seed + i)] as const)
          .sort((x, y) => x[1] - y[1])
          .map(([e]) => e);
        return configurationKey(Object.fromEntries(shuffled)) === configurationKey(params);
      }),
    );
  });

  it('round-trips through parseConfigurationKey as canonical strings', () => {
    fc.assert(
      fc.property(fc.dictionary(identifier, paramValue, { maxKeys: 8 }), (params) => {
        const expected = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, canonicalValue(v as ParamValue)]));
        expect(parseConfigurationKey(configurationKey(params))).toEqual(expected);
      }),
    );
  });

  it('differs whenever the canonical parameters differ', () => {
    fc.assert(
      fc.property(fc.dictionary(identifier, paramValue, { maxKeys: 5 }), fc.dictionary(identifier, paramValue, { maxKeys: 5 }), (a, b) => {
        const canon = (p: Record<string, ParamValue>) => JSON.stringify(Object.entries(p).map(([k, v]) => [k, canonicalValue(v)]).sort());
        return (configurationKey(a) === configurationKey(b)) === (canon(a) === canon(b));
      }),
    );
  });
});

describe('parseConfigurationKey', () => {
  it('parses a key', () => {
    expect(parseConfigurationKey('mb=8;offload=cpu;sp=2')).toEqual({ mb: '8', offload: 'cpu', sp: '2' });
    expect(parseConfigurationKey('default')).toEqual({});
  });

  it.each(['', 'a', 'a=', '=1', 'a=1;', 'a=1;;b=2', '1a=1', 'a=1;a=2', 'a-b=1'])('refuses %j', (key) => {
    expect(() => parseConfigurationKey(key)).toThrow(/is not a configuration key/);
  });

  it('cannot be used to set a prototype', () => {
    const parsed = parseConfigurationKey('__proto__=x');
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(['__proto__']);
  });
});
