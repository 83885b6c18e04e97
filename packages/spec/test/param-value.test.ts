import fc from 'fast-check';
import { canonicalValue, isSafeValue, ParamValue, parseCampaignSpec, SAFE_VALUE, unsafeValueMessage } from '../src';
import { issueAt, issuesOf, minimal } from './helpers';

describe('isSafeValue', () => {
  it.each(['none', 'cpu', '1', '0.5', '-3', '1e+21', 'a.b_c,d:e=f+g/h@i%j^k-l', 'x'.repeat(256), 'TRUE'])(
    'accepts %j',
    (value) => expect(isSafeValue(value)).toBe(true),
  );

  // Every character with a meaning to the shell in some quoting context, and then some.
  const refused = [' ', '\t', '\n', '\r', '"', "'", '`', '$', ';', '|', '&', '<', '>', '(', ')', '*', '?', '[', ']', '{', '}', '~', '#', '!', '\\', '\0', 'é', '\u202e'];
  it.each(refused)('refuses a value containing %j', (ch) => {
    expect(isSafeValue(`a${ch}b`)).toBe(false);
  });

  it('refuses the empty string and strings over 256 characters', () => {
    expect(isSafeValue('')).toBe(false);
    expect(isSafeValue('x'.repeat(257))).toBe(false);
  });
});

describe('unsafeValueMessage', () => {
  it('lists each refused character once, in order of appearance, and the allowed set', () => {
    expect(unsafeValueMessage('$(touch /tmp/x)')).toBe(
      'value "$(touch /tmp/x)" contains "$", "(", " ", ")" which are not allowed in parameter values (allowed: letters, digits and . _ , : = + / @ % ^ -); put free text in a file under files: instead',
    );
  });

  it('keeps control characters visible and the message on one line', () => {
    const message = unsafeValueMessage('a\nb');
    expect(message).toContain('"a\\nb"');
    expect(message).toContain('"\\n" which is not allowed');
    expect(message).not.toContain('\n');
  });

  it('explains empty and overlong values', () => {
    expect(unsafeValueMessage('')).toMatch(/empty/);
    expect(unsafeValueMessage('x'.repeat(300))).toMatch(/300 characters long; parameter values may have at most 256/);
  });
});

describe('canonicalValue', () => {
  it.each<[ParamValue, string]>([
    [4, '4'],
    [0.5, '0.5'],
    [1.0, '1'],
    [-0, '0'],
    [1e21, '1e+21'],
    [true, 'true'],
    [false, 'false'],
    ['cpu', 'cpu'],
    ['01', '01'],
  ])('%j → %j', (value, text) => expect(canonicalValue(value)).toBe(text));

  it('is always a safe value for any finite number or boolean', () => {
    fc.assert(fc.property(fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean()), (v) => isSafeValue(canonicalValue(v))));
  });
});

describe('ParamValue', () => {
  it('accepts finite numbers, booleans and safe strings', () => {
    for (const v of [1, -2.5, true, false, 'a-b']) expect(ParamValue.safeParse(v).success).toBe(true);
  });

  it('refuses non-finite numbers, null, objects and unsafe strings', () => {
    for (const v of [Infinity, -Infinity, NaN, null, {}, [], 'a b']) expect(ParamValue.safeParse(v).success).toBe(false);
  });
});

describe('parameter values in a campaign', () => {
  it('refuses a shell injection with the path of the value and what to do instead', () => {
    const issue = issueAt(issuesOf({ ...minimal, parameters: { msg: ['hello', '$(touch /tmp/x)'] } }), 'parameters.msg[1]');
    expect(issue.message).toContain('value "$(touch /tmp/x)" contains "$", "(", " "');
    expect(issue.message).toContain('put free text in a file under files: instead');
  });

  it('refuses unsafe values in zip groups and excludes too', () => {
    const issues = issuesOf({
      ...minimal,
      parameters: { a: ['x'] },
      zip: [{ b: ['ok', 'no;rm'] }],
      exclude: [{ a: 'x`id`' }, { a: ['x', 'y z'] }],
    });
    expect(issueAt(issues, 'zip[0].b[1]').message).toContain('";"');
    expect(issueAt(issues, 'exclude[0].a').message).toContain('"`"');
    expect(issueAt(issues, 'exclude[1].a[1]').message).toContain('" "');
  });

  it('for arbitrary strings: either refused at a path under parameters, or matching SAFE_VALUE', () => {
    const anyString = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.stringMatching(SAFE_VALUE), fc.string({ maxLength: 300 }));
    fc.assert(
      fc.property(anyString, (value) => {
        const result = parseCampaignSpec({ ...minimal, parameters: { p: [value] } });
        if (result.ok) return SAFE_VALUE.test(value) && result.spec.parameters['p']?.[0] === value;
        return !SAFE_VALUE.test(value) && result.issues.length === 1 && result.issues[0]?.path === 'parameters.p[0]';
      }),
      { numRuns: 300 },
    );
  });
});
