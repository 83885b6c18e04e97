import fc from 'fast-check';
import { shellQuote, UnquotableValueError } from '../src';
import { bash } from './helpers';

describe('shellQuote', () => {
  it.each([
    ['', `''`],
    ['abc', `'abc'`],
    ["it's", `'it'\\''s'`],
    ['$(touch /tmp/x)', `'$(touch /tmp/x)'`],
    ["''", `''\\'''\\'''`],
  ])('quotes %j as %s', (input, quoted) => {
    expect(shellQuote(input)).toBe(quoted);
  });

  it('refuses NUL, which no shell argument can carry', () => {
    expect(() => shellQuote('a\0b')).toThrow(UnquotableValueError);
  });

  it('evaluates to the original string in bash, for any string without NUL', () => {
    const anyChar = fc.oneof(
      fc.constantFrom(...`'"\`$\\;|&<>(){}[]*?~!# \t\n\r`.split('')),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    );
    fc.assert(
      fc.property(fc.string({ unit: anyChar, maxLength: 40 }), (s) => {
        fc.pre(!s.includes('\0'));
        const result = bash(['-c', `printf %s ${shellQuote(s)}`]);
        expect(result.status).toBe(0);
        expect(result.stdout.equals(Buffer.from(s, 'utf8'))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
