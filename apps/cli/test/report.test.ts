import { junitReport, markdownReport, orderedVerdicts, type ReportInput } from '@erg/cli';
import { expectValidJunit as expectValid, suiteCounts, testcases } from './junit';
import { BASELINE, CANDIDATE, NASTY_KEY, noVerdicts, passVerdict, regressedVerdict } from './fixtures/verdicts';

const input = (over: Partial<ReportInput> = {}): ReportInput => ({ suite: 'nightly', campaignId: CANDIDATE, baselineId: BASELINE, verdict: regressedVerdict(), ...over });

describe('junitReport', () => {
  test('matches the XSD, counts agree with the testcases, keys with XML special characters survive', async () => {
    const xml = junitReport(input());
    await expectValid(xml);
    const cases = testcases(xml);
    expect(cases.map((c) => `${c.classname} ${c.name} ${c.outcome ?? 'pass'}`)).toEqual([
      `${NASTY_KEY} time failure`,
      'plain=1 time error',
      'plain=1 energy pass',
      `${NASTY_KEY} energy pass`,
      'new=1 comparison skipped',
      'old=<1> comparison skipped',
    ]);
    expect(suiteCounts(xml)).toEqual({ tests: 6, failures: 1, errors: 1, skipped: 2 });
    expect(xml).toContain('<testsuites name="erg" tests="6" failures="1" errors="1" skipped="2">');
    expect(xml).toContain('<testsuite name="erg.nightly"');
  });

  test('a regression is a failure with the change, its 95 % interval and p', () => {
    const failure = testcases(junitReport(input()))[0]!;
    expect(failure.type).toBe('regressed');
    expect(failure.message).toBe('time regressed: +12.3 % (95 % interval +8.1 % to +16.5 %), one-sided Welch p = 0.0012');
    expect(failure.body).toContain('n 5 baseline / 5 candidate');
  });

  test('inconclusive is an error (so CI does not pass it silently); pass and improved carry their figures', () => {
    const cases = testcases(junitReport(input()));
    const inconclusive = cases[1]!;
    expect(inconclusive).toMatchObject({ outcome: 'error', type: 'inconclusive', message: 'inconclusive: too_few_repetitions' });
    expect(inconclusive.body).toContain('the policy needs at least 3 on each side');
    expect(cases[2]!.body).toMatch(/<system-out>improved: energy -20\.0 % \(95 % interval -25\.0 % to -15\.0 %\)/);
  });

  test('properties name the campaigns, the verdict and the policy', () => {
    const xml = junitReport(input({ note: 'CI run <42> & more' }));
    expect(xml).toContain(`<property name="erg.campaign" value="${CANDIDATE}"/>`);
    expect(xml).toContain(`<property name="erg.baseline" value="${BASELINE}"/>`);
    expect(xml).toContain('<property name="erg.verdict" value="regressed"/>');
    expect(xml).toContain('<property name="erg.policy.minRepetitions" value="3"/>');
    expect(xml).toContain('CI run &lt;42&gt; &amp; more');
  });

  test('no verdict (first run of a suite): one passing testcase named "baseline" that says so', async () => {
    const xml = junitReport(input({ baselineId: null, verdict: null }));
    await expectValid(xml);
    const cases = testcases(xml);
    expect(cases).toHaveLength(1);
    expect(cases[0]).toMatchObject({ classname: 'erg.nightly', name: 'baseline', outcome: null });
    expect(cases[0]!.body).toContain('no baseline yet');
    expect(suiteCounts(xml)).toEqual({ tests: 1, failures: 0, errors: 0, skipped: 0 });
    expect(xml).not.toContain('erg.baseline');
  });

  test('an inconclusive campaign without any verdict still has one error testcase', async () => {
    const xml = junitReport(input({ verdict: noVerdicts() }));
    await expectValid(xml);
    expect(testcases(xml)).toEqual([expect.objectContaining({ name: 'verdict', outcome: 'error', type: 'inconclusive', message: 'inconclusive: no_verdicts' })]);
    expect(suiteCounts(xml)).toEqual({ tests: 1, failures: 0, errors: 1, skipped: 0 });
  });

  test('a passing verdict, and characters XML cannot hold at all', async () => {
    const xml = junitReport(input({ verdict: passVerdict(), suite: 'a&b<c>"d\'', note: 'bell \u0007 and\nnewline\ttab' }));
    await expectValid(xml);
    expect(suiteCounts(xml)).toEqual({ tests: 2, failures: 0, errors: 0, skipped: 0 });
    expect(xml).toContain('<testsuite name="erg.a&amp;b&lt;c&gt;&quot;d&apos;"');
    expect(xml).toContain('bell \uFFFD and\nnewline\ttab');
  });

  test('the schema itself rejects what consumers would reject', async () => {
    await expect(expectValid('<testsuites><testsuite name="x" tests="1" failures="0" errors="0"><testcase name="t"/></testsuite></testsuites>')).rejects.toThrow(/classname/);
  });
});

describe("the judged campaign's claims", () => {
  const AA = 'no distinguishable difference between the 2 configurations at 95 % (Holm over 3 comparisons)';
  const claims = { ok: true as const, summary: AA, distinguishable: false };

  test('JUnit carries them as properties and a line of the suite output, never as a testcase', async () => {
    const xml = junitReport(input({ claims }));
    await expectValid(xml);
    expect(xml).toContain(`<property name="erg.claims" value="${AA}"/>`);
    expect(xml).toContain('<property name="erg.claims.distinguishable" value="false"/>');
    expect(xml).toContain(`Claims of campaign ${CANDIDATE}: ${AA}</system-out>\n  </testsuite>`);
    expect(suiteCounts(xml)).toEqual(suiteCounts(junitReport(input())));
    expect(junitReport(input())).not.toContain('erg.claims');
  });

  test('Markdown says them after the verdict, or why they could not be read', () => {
    expect(markdownReport(input({ claims }))).toContain(`\n\nClaims of campaign ${CANDIDATE}: ${AA}.\n`);
    expect(markdownReport(input({ baselineId: null, verdict: null, claims }))).toContain(AA);
    const missing = markdownReport(input({ claims: { ok: false, why: 'the API answered 503' } }));
    expect(missing).toContain(`Claims of campaign ${CANDIDATE}: not available (the API answered 503).`);
    expect(markdownReport(input())).not.toContain('Claims of campaign');
  });
});

describe('markdownReport', () => {
  test('the verdict first with a symbol, then the policy, the decisive rows first, and the campaign ids', () => {
    const md = markdownReport(input());
    const lines = md.split('\n');
    expect(lines[0]).toBe('## ❌ REGRESSED — suite `nightly`');
    expect(md).toContain('**1 regressed, 1 inconclusive, 1 improved, 1 pass**');
    expect(md).toMatch(/Policy: a change above \+5\.0 % with one-sided Welch p < 0\.05 is a regression .*\(threshold 0\.05, alpha 0\.05, min repetitions 3, max CV 0\.25\)\./);
    const rows = lines.filter((l) => l.startsWith('| `') || l.startsWith('| ``'));
    expect(rows).toHaveLength(4);
    expect(rows[0]).toContain('| time | +12.3 % | +8.1 % to +16.5 % | 0.0012 | 5 / 5 | ❌ regressed |');
    expect(rows[0]).toContain('mode=<a&b>;quote="x";apos=\'y\';amp=&amp;');
    expect(rows[1]).toMatch(/\| time \| \+1\.0 % \| — \| — \| 2 \/ 2 \| ⚠️ inconclusive: too few repetitions/);
    expect(rows[2]).toContain('| energy | -20.0 % | -25.0 % to -15.0 % | 0.0001 | 5 / 5 | ✅ improved |');
    expect(rows[3]).toContain('✅ pass');
    expect(md).toContain('Only in this campaign (1): `new=1`');
    expect(md).toContain('Only in the baseline (1): `old=<1>`');
    expect(md).toContain(`Campaign \`${CANDIDATE}\` · baseline \`${BASELINE}\``);
  });

  test('no verdict: says so, with the note', () => {
    const md = markdownReport(input({ baselineId: null, verdict: null, note: 'first run of the suite' }));
    expect(md.split('\n')[0]).toBe('## ℹ️ No verdict — suite `nightly`');
    expect(md).toContain('no baseline yet');
    expect(md).toContain('first run of the suite');
    expect(md).toContain('no baseline');
  });

  test('inconclusive without verdicts names the reason', () => {
    const md = markdownReport(input({ verdict: noVerdicts() }));
    expect(md.split('\n')[0]).toBe('## ⚠️ INCONCLUSIVE — suite `nightly`');
    expect(md).toContain('no configuration was measured in both campaigns');
  });
});

test('orderedVerdicts puts the deciding verdicts first', () => {
  expect(orderedVerdicts(regressedVerdict()).map((e) => `${e.key === NASTY_KEY ? 'nasty' : e.key} ${e.verdict.metric} ${e.verdict.status}`)).toEqual([
    'nasty time regressed',
    'plain=1 time inconclusive',
    'plain=1 energy improved',
    'nasty energy pass',
  ]);
});
