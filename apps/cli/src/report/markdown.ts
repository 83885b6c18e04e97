// A regression verdict as Markdown, for a pull-request comment or a CI job summary: the verdict
// first (with a symbol, so it reads without colour), then the policy, then one table row per
// configuration × metric with the decisive rows on top, then which campaigns were compared.
import { mdCell, mdCode, renderMarkdownTable } from '../output/markdown';
import type { Column } from '../output/table';
import { formatP } from '@erg/format';
import {
  CAMPAIGN_REASON_TEXT, changeText, claimsText, inconclusiveText, intervalText, noVerdictText, orderedVerdicts, policyText, reportStatus, STATUS_SYMBOL,
  SUITE_REASON_TEXT, suiteProblems, type CampaignVerdict, type ReportInput,
} from './verdict-text';

const COLUMNS: Column[] = [
  { header: 'configuration' },
  { header: 'metric' },
  { header: 'change', align: 'right' },
  { header: '95 % interval', align: 'right' },
  { header: 'p', align: 'right' },
  { header: 'n baseline / candidate', align: 'right' },
  { header: 'status' },
];

function verdictTable(verdict: CampaignVerdict): string {
  const rows = orderedVerdicts(verdict).map(({ key, verdict: v }) => {
    const status = `${STATUS_SYMBOL[v.status]} ${v.status}${v.status === 'inconclusive' ? `: ${mdCell(inconclusiveText(v, verdict.policy))}` : ''}`;
    return [mdCode(key), v.metric, changeText(v), intervalText(v), mdCell(formatP(v.p)), `${v.nBaseline} / ${v.nCandidate}`, status];
  });
  return renderMarkdownTable(COLUMNS, rows);
}

function keyList(title: string, keys: readonly string[]): string[] {
  return keys.length === 0 ? [] : ['', `${title} (${keys.length}): ${keys.map(mdCode).join(', ')}`];
}

/** A regression verdict (or its absence) as Markdown. */
export function markdownReport(input: ReportInput): string {
  const suite = mdCode(input.suite);
  const ids = [`Campaign ${mdCode(input.campaignId)}`, input.baselineId === null ? 'no baseline' : `baseline ${mdCode(input.baselineId)}`].join(' · ');
  const note = input.note === undefined ? [] : ['', mdCell(input.note)];
  const claims = claimsText(input);
  const claimLines = claims === null ? [] : ['', mdCell(claims) + '.'];
  const verdict = input.verdict;
  const problems = suiteProblems(input).map((r) => `**${mdCell(SUITE_REASON_TEXT[r] ?? r)}.**`);
  const problemLines = problems.length === 0 ? [] : ['', ...problems];
  if (verdict === null) {
    const heading = problems.length > 0 ? `## ${STATUS_SYMBOL.inconclusive} INCONCLUSIVE — suite ${suite}` : `## ℹ️ No verdict — suite ${suite}`;
    return [heading, ...problemLines, '', mdCell(noVerdictText(input)) + '.', ...claimLines, ...note, '', ids, ''].join('\n');
  }
  const status = reportStatus(input);
  const shown = status === null || status === 'running' ? verdict.status : status;
  const c = verdict.counts;
  const tally = `${c.regressed} regressed, ${c.inconclusive} inconclusive, ${c.improved} improved, ${c.pass} pass`;
  const reasons = verdict.reasons.length === 0 ? '' : ` — ${verdict.reasons.map((r) => CAMPAIGN_REASON_TEXT[r]).join('; ')}`;
  const hasRows = verdict.configurations.some((cfg) => cfg.verdicts.length > 0);
  return [
    `## ${STATUS_SYMBOL[shown]} ${shown.toUpperCase()} — suite ${suite}`,
    ...problemLines,
    '',
    `**${tally}**${reasons}`,
    '',
    `Policy: ${policyText(verdict.policy)} (threshold ${verdict.policy.threshold}, alpha ${verdict.policy.alpha}, ` +
      `min repetitions ${verdict.policy.minRepetitions}, max CV ${verdict.policy.maxCv}).`,
    '',
    hasRows ? verdictTable(verdict).trimEnd() : '_No configuration was measured in both campaigns._',
    ...keyList('Only in this campaign', verdict.onlyInCandidate),
    ...keyList('Only in the baseline', verdict.onlyInBaseline),
    ...claimLines,
    ...note,
    '',
    ids,
    '',
  ].join('\n');
}
