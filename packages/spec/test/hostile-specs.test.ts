// Specs built to cost erg more than their size: YAML aliases that expand, nesting that
// overflows recursive code, records and lists without end, reports longer than the spec.
// Each is refused with an issue a person can act on, in work bounded by the limits.
import { decodeCampaignText, DOCUMENT_LIMITS, documentIssue, MAX_REPORTED_ISSUES, parseCampaignSpec, parseCampaignText } from '../src';
import { issueAt, issuesOf, minimal } from './helpers';

const yamlOf = (lines: string[]) => lines.join('\n') + '\n';

describe('YAML alias expansion is capped by size, not only by count', () => {
  it('refuses 99 aliases of one 200 KB scalar (20 MB once expanded)', () => {
    const text = yamlOf([
      'name: bomb',
      'cluster: local',
      'run: true',
      `description: &big ${'x'.repeat(200_000)}`,
      'files:',
      ...Array.from({ length: 99 }, (_, i) => `  f${i}.txt: *big`),
    ]);
    expect(text.length).toBeLessThan(210_000);
    const result = decodeCampaignText(text, 'yaml');
    expect(result).toEqual({
      ok: false,
      issues: [{ path: '(root)', code: 'document_too_large', message: expect.stringMatching(/characters of text in all \(keys and strings, YAML aliases expanded\)/) }],
    });
  });

  it('still accepts a few aliases that stay small', () => {
    const text = yamlOf(['name: a', 'cluster: local', 'run: srun ./bench', 'parameters:', '  a: &v [1, 2]', 'zip:', '  - { b: *v }']);
    expect(parseCampaignText(text, 'yaml').ok).toBe(true);
  });
});

describe('deep nesting is a 4xx issue, never a stack overflow', () => {
  const flow = (n: number) => `name: deep\ndescription: ${'['.repeat(n)}${']'.repeat(n)}\n`;
  const block = (n: number) => Array.from({ length: n }, (_, i) => `${' '.repeat(i)}k:`).join('\n') + ' 1\n';

  it.each([
    ['5,000 levels of flow lists', flow(5000)],
    ['20,000 levels of flow lists', flow(20_000)],
    ['1,000 levels of block maps', block(1000)],
    ['5,000 levels of "- - -"', `${'- '.repeat(5000)}x\n`],
  ])('refuses %s in YAML, as often as it is sent', (_what, text) => {
    // Before the depth was measured, the YAML parser overflowed its stack; a second overflow
    // inside V8's regular expression compiler aborted the whole process.
    for (let i = 0; i < 3; i++) {
      expect(decodeCampaignText(text, 'yaml')).toEqual({
        ok: false,
        issues: [{ path: '(root)', code: 'document_too_large', message: `is nested more than ${DOCUMENT_LIMITS.maxDepth} levels deep; a campaign spec needs at most 5` }],
      });
    }
  });

  it('refuses 5,000 levels of JSON, as text and as a value', () => {
    const text = `{"name":"deep","description":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
    expect(decodeCampaignText(text, 'json')).toMatchObject({ ok: false, issues: [{ code: 'document_too_large' }] });
    expect(parseCampaignSpec(JSON.parse(text))).toMatchObject({ ok: false, issues: [{ code: 'document_too_large' }] });
  });

  it('does not count brackets inside strings and block scalars as nesting', () => {
    const text = yamlOf(['name: brackets', 'cluster: local', 'run: |', `  echo "${'['.repeat(100)}"`, `  test ${'[ '.repeat(50)}`, `description: "${'{'.repeat(100)}"`]);
    expect(parseCampaignText(text, 'yaml')).toMatchObject({ ok: true });
  });

  it('accepts the deepest nesting a suite needs (campaign.exclude[0].a[0])', () => {
    expect(documentIssue({ campaign: { exclude: [{ a: [1] }] } })).toBeNull();
  });
});

describe('sizes of records, lists and reports', () => {
  const many = (n: number, value: unknown) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, value]));

  it('refuses more than 64 parameters, zip names, exclude names or files', () => {
    expect(issueAt(issuesOf({ ...minimal, parameters: many(65, [1]) }), 'parameters')).toMatchObject({ code: 'too_big', message: 'has 65 parameters; at most 64' });
    expect(issueAt(issuesOf({ ...minimal, zip: [many(65, [1])] }), 'zip[0]')).toMatchObject({ code: 'too_big' });
    expect(issueAt(issuesOf({ ...minimal, parameters: { p0: [1] }, exclude: [many(65, 1)] }), 'exclude[0]')).toMatchObject({ code: 'too_big' });
    const files = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`f${i}.txt`, 'x']));
    expect(issueAt(issuesOf({ ...minimal, files }), 'files')).toMatchObject({ code: 'too_big', message: 'has 65 files; at most 64' });
  });

  it('refuses a spec with more values than the document limit before any schema sees it', () => {
    const parameters = many(60, Array.from({ length: 1000 }, (_, j) => j));
    expect(issuesOf({ ...minimal, parameters })).toEqual([
      { path: '(root)', code: 'document_too_large', message: expect.stringMatching(/^has more than 50,000 values/) },
    ]);
  });

  it('reports at most MAX_REPORTED_ISSUES issues, each short, however many values are wrong', () => {
    // 1,000 exclude entries × 40 values that are not values of a 1,000-value axis: 40,000
    // problems, each of whose messages listed all 1,000 values (hundreds of MB in all).
    const axis = Array.from({ length: 1000 }, (_, j) => j);
    const exclude = Array.from({ length: 1000 }, () => ({ a: Array.from({ length: 40 }, (_, k) => 5000 + k) }));
    const issues = issuesOf({ ...minimal, parameters: { a: axis }, exclude });
    expect(issues).toHaveLength(MAX_REPORTED_ISSUES + 1);
    expect(issues[MAX_REPORTED_ISSUES]).toEqual({ path: '(root)', code: 'too_many_issues', message: 'only the first 100 issues are shown; fix these first' });
    expect(issues[0]?.message).toBe('value 5000 is not one of the values of a (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, … 980 more), so this exclude can never match');
    expect(JSON.stringify(issues).length).toBeLessThan(50_000);
  });
});

describe('messages stay short however large the spec', () => {
  it('lists at most 20 parameter names when an exclude names an unknown one', () => {
    const zip = Array.from({ length: 40 }, (_, g) => Object.fromEntries(Array.from({ length: 40 }, (_, k) => [`g${g}_${k}`, [1]])));
    const issue = issueAt(issuesOf({ ...minimal, zip, exclude: [{ nope: 1 }] }), 'exclude[0].nope');
    expect(issue.message).toMatch(/^"nope" is not a parameter; defined: g0_0, g0_1, .*, … 1580 more$/);
  });
});
