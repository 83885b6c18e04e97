// A regression verdict as Markdown, for a pull-request comment or a CI job summary: the verdict
// first (with a symbol, so it reads without colour), then the policy, then one table row per
// configuration × metric with the decisive rows on top, then which campaigns were compared.
import { mdCell, mdCode, renderMarkdownTable } from '../output/markdown';
import type { Column } from '../output/table';
import { formatP } from '../output/units';
import {
  CAMPAIGN_REASON_TEXT, changeText, inconclusiveText, intervalText, noVerdictText, orderedVerdicts, policyText, STATUS_SYMBOL,
  type CampaignVerdict, type ReportInput,
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
  const verdict = input.verdict;
  if (verdict === null) {
    return [`## ℹ️ No verdict — suite ${suite}`, '', mdCell(noVerdictText(input)) + '.', ...note, '', ids, ''].join('\n');
  }
  const c = verdict.counts;
  const tally = `${c.regressed} regressed, ${c.inconclusive} inconclusive, ${c.improved} improved, ${c.pass} pass`;
  const reasons = verdict.reasons.length === 0 ? '' : ` — ${verdict.reasons.map((r) => CAMPAIGN_REASON_TEXT[r]).join('; ')}`;
  const hasRows = verdict.configurations.some((cfg) => cfg.verdicts.length > 0);
  return [
    `## ${STATUS_SYMBOL[verdict.status]} ${verdict.status.toUpperCase()} — suite ${suite}`,
    '',
    `**${tally}**${reasons}`,
    '',
    `Policy: ${policyText(verdict.policy)} (threshold ${verdict.policy.threshold}, alpha ${verdict.policy.alpha}, ` +
      `min repetitions ${verdict.policy.minRepetitions}, max CV ${verdict.policy.maxCv}).`,
    '',
    hasRows ? verdictTable(verdict).trimEnd() : '_No configuration was measured in both campaigns._',
    ...keyList('Only in this campaign', verdict.onlyInCandidate),
    ...keyList('Only in the baseline', verdict.onlyInBaseline),
    ...note,
    '',
    ids,
    '',
  ].join('\n');
}
