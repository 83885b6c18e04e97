// A regression verdict as a JUnit XML report, for CI systems that show test results (GitLab,
// Jenkins, GitHub Actions reporters). The shape is pinned by test/fixtures/junit.xsd.
//
// Mapping:
// - one <testsuite name="erg.<suite>"> inside <testsuites>;
// - one <testcase classname="<configuration key>" name="time"|"energy"> per configuration × metric;
// - regressed → <failure type="regressed">; pass and improved → a plain testcase whose
//   <system-out> gives the figures;
// - inconclusive → <error type="inconclusive">, not <skipped>: CI systems count skipped tests as
//   green, but an inconclusive verdict means the check could not be made (too few repetitions,
//   too noisy), which `erg regress` reports with exit code 2. It must show up, not pass silently;
// - a configuration only one campaign has → one <skipped> testcase named "comparison";
// - no verdict at all (a suite's first run: no baseline yet) → one passing testcase named
//   "baseline" that says so. Not zero testcases: several consumers (Jenkins' junit step, for
//   one) fail a build whose report holds no test.
// A campaign verdict with no configuration verdicts (nothing measured on both sides) gets one
// <error> testcase named "verdict", for the same reason as inconclusive ones; a suite run made
// inconclusive by failed or cancelled repetitions gets one <error> testcase named "campaign".
// What the campaign's own results claim (its configurations against each other, with their
// uncertainty) is informational: properties erg.claims and erg.claims.distinguishable and a line
// of the suite's <system-out>, never a testcase — it is not the regression check.
import { formatPercent } from '@erg/format';
import { openTag, xmlText } from './xml';
import {
  CAMPAIGN_REASON_TEXT, claimsText, figuresText, inconclusiveText, noVerdictText, orderedVerdicts, policyText, reportStatus, samplesText,
  SUITE_REASON_TEXT, suiteProblems, type ReportInput, type VerdictEntry,
} from './verdict-text';

interface TestCase {
  classname: string;
  name: string;
  /** The child that decides the outcome, absent for a pass. */
  outcome?: { element: 'failure' | 'error' | 'skipped'; message: string; type?: string; text?: string };
  systemOut?: string;
}

function caseXml(c: TestCase): string {
  const lines = [`    ${openTag('testcase', { classname: c.classname, name: c.name })}>`];
  if (c.outcome) {
    const { element, message, type, text } = c.outcome;
    const attrs: Record<string, string> = type === undefined ? { message } : { message, type };
    lines.push(text === undefined ? `      ${openTag(element, attrs)}/>` : `      ${openTag(element, attrs)}>${xmlText(text)}</${element}>`);
  }
  if (c.systemOut !== undefined) lines.push(`      <system-out>${xmlText(c.systemOut)}</system-out>`);
  lines.push('    </testcase>');
  return lines.join('\n');
}

function verdictCase({ key, verdict: v }: VerdictEntry, input: ReportInput & { verdict: NonNullable<ReportInput['verdict']> }): TestCase {
  const base = { classname: key, name: v.metric };
  const figures = `${figuresText(v)}; ${samplesText(v)}`;
  switch (v.status) {
    case 'regressed':
      return {
        ...base,
        outcome: {
          element: 'failure',
          type: 'regressed',
          message: `${v.metric} regressed: ${figuresText(v).replace(`${v.metric} `, '')}`,
          text: `${figures}\nRegression: ${policyText(input.verdict.policy)}.`,
        },
      };
    case 'inconclusive':
      return {
        ...base,
        outcome: { element: 'error', type: 'inconclusive', message: `inconclusive: ${v.reason ?? 'unknown'}`, text: `${inconclusiveText(v, input.verdict.policy)}\n${figures}` },
      };
    case 'improved':
    case 'pass':
      return { ...base, systemOut: `${v.status}: ${figures}` };
  }
}

function campaignCases(input: ReportInput): TestCase[] {
  const problems = suiteProblems(input);
  if (problems.length === 0) return [];
  const text = problems.map((r) => SUITE_REASON_TEXT[r] ?? r).join('; ');
  return [{ classname: `erg.${input.suite}`, name: 'campaign', outcome: { element: 'error', type: 'inconclusive', message: `inconclusive: ${problems.join(', ')}`, text } }];
}

function testCases(input: ReportInput): TestCase[] {
  const suiteClass = `erg.${input.suite}`;
  const verdict = input.verdict;
  if (verdict === null) {
    return [
      ...campaignCases(input),
      { classname: suiteClass, name: 'baseline', systemOut: [input.note ?? noVerdictText(input), `campaign: ${input.campaignId}`].join('\n') },
    ];
  }
  const withVerdict = { ...input, verdict };
  const cases = [...campaignCases(input), ...orderedVerdicts(verdict).map((e) => verdictCase(e, withVerdict))];
  if (!cases.some((c) => c.classname !== suiteClass)) {
    const reasons = verdict.reasons.map((r) => CAMPAIGN_REASON_TEXT[r]).join('; ') || 'no verdicts';
    cases.push({ classname: suiteClass, name: 'verdict', outcome: { element: 'error', type: 'inconclusive', message: `inconclusive: ${verdict.reasons.join(', ') || 'no_verdicts'}`, text: reasons } });
  }
  for (const key of verdict.onlyInCandidate) {
    cases.push({ classname: key, name: 'comparison', outcome: { element: 'skipped', message: 'only in this campaign: the baseline has no such configuration to compare with' } });
  }
  for (const key of verdict.onlyInBaseline) {
    cases.push({ classname: key, name: 'comparison', outcome: { element: 'skipped', message: 'only in the baseline: this campaign did not measure it' } });
  }
  return cases;
}

/** A regression verdict (or its absence) as a JUnit XML document. */
export function junitReport(input: ReportInput): string {
  const cases = testCases(input);
  const count = (element: 'failure' | 'error' | 'skipped') => cases.filter((c) => c.outcome?.element === element).length;
  const counts = { tests: cases.length, failures: count('failure'), errors: count('error'), skipped: count('skipped') };
  const properties: [string, string][] = [
    ['erg.suite', input.suite],
    ['erg.campaign', input.campaignId],
    ...(input.baselineId === null ? [] : [['erg.baseline', input.baselineId] as [string, string]]),
    ['erg.verdict', reportStatus(input) ?? 'none'],
    ...(input.verdict
      ? ([
          ['erg.policy.threshold', String(input.verdict.policy.threshold)],
          ['erg.policy.alpha', String(input.verdict.policy.alpha)],
          ['erg.policy.minRepetitions', String(input.verdict.policy.minRepetitions)],
          ['erg.policy.maxCv', String(input.verdict.policy.maxCv)],
        ] as [string, string][])
      : []),
    ...(input.claims?.ok
      ? ([
          ['erg.claims', input.claims.summary],
          ['erg.claims.distinguishable', String(input.claims.distinguishable)],
        ] as [string, string][])
      : []),
  ];
  const summary = input.verdict
    ? `verdict: ${input.verdict.status}${input.verdict.reasons.length > 0 ? ` (${input.verdict.reasons.map((r) => CAMPAIGN_REASON_TEXT[r]).join('; ')})` : ''}; ` +
      `policy: regression = change above ${formatPercent(input.verdict.policy.threshold, { signed: true })} at p < ${input.verdict.policy.alpha}`
    : (input.note ?? noVerdictText(input));
  const claims = claimsText(input);
  const systemOut = [summary, ...(input.verdict && input.note ? [input.note] : []), ...(claims === null ? [] : [claims])].join('\n');
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `${openTag('testsuites', { name: 'erg', ...counts })}>`,
    `  ${openTag('testsuite', { name: `erg.${input.suite}`, ...counts })}>`,
    '    <properties>',
    ...properties.map(([name, value]) => `      ${openTag('property', { name, value })}/>`),
    '    </properties>',
    ...cases.map(caseXml),
    `    <system-out>${xmlText(systemOut)}</system-out>`,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
