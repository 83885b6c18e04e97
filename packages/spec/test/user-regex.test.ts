// Users' regexes are RE2 (user-regex.ts): what RE2 cannot express is refused with what to write
// instead, and so is a pattern (or a spec's patterns together) whose program is too large to
// compile on the API's thread; the size is estimated from the source before compiling.
import { RE2JS } from 're2js';
import { compileUserRegex, estimateRegexProgram, MAX_REGEX_PROGRAM, MAX_SPEC_REGEX_PROGRAM } from '../src';
import { issueAt, issuesOf, minimal, specOf } from './helpers';

const problemOf = (source: string) => {
  const compiled = compileUserRegex(source);
  return compiled.ok ? null : compiled.problem;
};

describe('compileUserRegex', () => {
  test('compiles RE2 syntax with ^ and $ at each line, named groups in either spelling', () => {
    const compiled = compileUserRegex('^step (?<n>\\d+) loss=(?P<loss>[0-9.]+)$');
    if (!compiled.ok) throw new Error(compiled.problem);
    expect(compiled.regex.groupCount()).toBe(2);
    expect(compiled.regex.namedGroups()).toEqual({ n: 1, loss: 2 });
    const m = compiled.regex.matcher('warmup\nstep 3 loss=0.5\n');
    expect(m.find()).toBe(true);
    expect(m.group('loss')).toBe('0.5');
  });

  test('says what to write instead of what JavaScript has and RE2 has not', () => {
    expect(problemOf('x(?=y)')).toMatch(/^RE2 syntax: lookahead \(\?=…\) and \(\?!…\) is not supported; match the text around the value as part of the pattern/);
    expect(problemOf('x(?!y)')).toMatch(/^RE2 syntax: lookahead /);
    expect(problemOf('(?<=x)y')).toMatch(/^RE2 syntax: lookbehind /);
    expect(problemOf('(?<!x)y')).toMatch(/^RE2 syntax: lookbehind /);
    expect(problemOf('(a)\\1')).toMatch(/^RE2 syntax: backreferences \(\\1, \\k<name>\) are not supported; write out the text/);
    expect(problemOf('(?<x>a)\\k<x>')).toMatch(/^RE2 syntax: backreferences /);
    expect(problemOf('(?P<x>a)(?P=x)')).toMatch(/^RE2 syntax: backreferences /);
    expect(problemOf('\\u00B5s')).toBe('RE2 syntax: \\uXXXX is not supported; write \\x{XXXX} (e.g. \\x{00B5} for µ)');
    expect(problemOf('a[^]b')).toBe('RE2 syntax: [^] is not supported; write (?s:.) for any character');
    expect(problemOf('a++')).toBe('RE2 syntax: invalid nested repetition operator: `++`');
    expect(problemOf('x{1001}')).toBe('RE2 syntax: invalid repeat count: `{1001}`');
    expect(problemOf('^(a+)+$')).toBeNull();
  });

  test('refuses a pattern whose program is too large, before compiling it', () => {
    expect(problemOf('\\S{1,1000}\\d{1,1000}')).toBeNull();
    expect(MAX_REGEX_PROGRAM).toBe(4000);
    expect(problemOf('\\S{1,1000}\\d{1,1000}x{1,10}')).toMatch(/^RE2: the pattern compiles to about 4,0\d\d instructions, more than 4,000 \(a counted repetition/);
  });
});

describe('estimateRegexProgram', () => {
  test("is close to re2js's program size, never much below it", () => {
    const patterns = [
      'loss=([0-9.]+)', '^step ', '^(a+)+$', 'x{1,999}', '\\S{1,1000}\\d{1,1000}', '[a-z]{1000}', '(?:[a-z]{1,999}|[0-9]{1,999})',
      '(x){999}', '^\\[(?<t>[^\\]]+)\\] step begins', 'global_step=(?<n>\\d+) .* at (?<t>[0-9.]+)', '(?:(?:a|ab|b|ba){1,30}){1,30}c',
      '(?:.{0,30}a){10}c', '\\p{Greek}+', '\\x{41}{3}', '[[:alpha:]]{5,}', '\\Q{1,999}\\E', '(?i)abc', '(?i:ab)c', '(?P<x>a)(?<y>b)',
      'a{2,}', '[]a]+', '(a|b)*a(a|b){30}c', '(\\d{1,3}(?:,\\d{3})*)', '(?s:.)', '(?:\\w+\\s){1,999}',
    ];
    for (const pattern of patterns) {
      const size = RE2JS.compile(pattern, RE2JS.MULTILINE).programSize();
      const estimate = estimateRegexProgram(pattern);
      // RE2 folds alternatives of single characters into a class: the estimate may be above, not below.
      expect({ pattern, ok: estimate >= size - 2 && estimate <= 2 * size + 10 }).toEqual({ pattern, ok: true });
    }
  });

  test('counts an alternation of large repetitions in full (compiling 90 of them took 1 s)', () => {
    const wide = Array.from({ length: 90 }, (_, i) => `x${i}{1,999}`).join('|');
    expect(estimateRegexProgram(wide)).toBeGreaterThan(170_000);
  });
});

describe('a spec’s regexes together', () => {
  test(`are refused past ${MAX_SPEC_REGEX_PROGRAM.toLocaleString('en-US')} instructions, at the regex that crosses it, and nothing after it is compiled`, () => {
    // Each about 3,000 instructions: three fit, the fourth crosses 10,000.
    const metrics = Array.from({ length: 5 }, (_, i) => ({ name: `m${i}`, regex: `v=(\\S{1,1000}\\d{1,500})` }));
    // Past the limit nothing is compiled: not even a refusal comes back for what follows.
    const issues = issuesOf({ ...minimal, metrics: [...metrics, { name: 'late', regex: '([0-9]+)(?= ms)' }] });
    expect(issues).toHaveLength(1);
    expect(issueAt(issues, 'metrics[3].regex')).toEqual({
      path: 'metrics[3].regex',
      code: 'invalid_regex',
      message: expect.stringMatching(/^RE2: the spec's regexes compile to about 12,\d{3} instructions together, more than 10,000; use \+, \* or smaller counts, or fewer regexes$/),
    });
    expect(specOf({ ...minimal, metrics: metrics.slice(0, 3) }).metrics).toHaveLength(3);
  });
});
