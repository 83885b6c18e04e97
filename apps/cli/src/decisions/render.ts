// `erg decisions CAMPAIGN`: what an adaptive campaign decided (GET /v1/campaigns/:id/decisions) —
// its strategy, the runs it used against the full grid, why it stopped or what is still
// undecided, and per configuration its status and the reason, with the p-value or intervals.
import { formatPercent, plural } from '@erg/format';
import type { CampaignDecisions } from '../api-types';
import type { Colors } from '../output/color';
import { renderFields, renderTable, type Column } from '../output/table';

const COLUMNS: Column[] = [{ header: 'configuration' }, { header: 'status' }, { header: 'n', align: 'right' }, { header: 'reason' }];

/** How each status reads, coloured where it ends a configuration's runs. */
function statusText(status: string, color: Colors): string {
  if (status === 'dropped') return color.yellow(status);
  if (status === 'front' || status === 'precise') return color.green(status);
  return status;
}

export function decisionsReport(d: CampaignDecisions, color: Colors): string {
  if (d.strategy.kind === 'grid') {
    return `Campaign ${d.campaignId} runs the full grid (strategy grid): ${plural(d.runsUsed, 'run')}, no decisions to show.\n`;
  }
  const s = d.strategy;
  const saved = d.gridRuns > 0 ? 1 - d.runsUsed / d.gridRuns : null;
  const fewer = saved !== null && saved > 0 ? ` (${formatPercent(saved)} fewer)` : '';
  const search = s.kind === 'search';
  const fields: [string, string][] = [
    search
      ? ['Strategy', `search: ${plural(s.repetitions, 'run')} per configuration tried, up to ${s.parallel ?? 4} in flight, seed ${s.seed}, front of ${s.objectives.join(' and ')}`]
      : ['Strategy', `adaptive: ${s.minRepetitions}–${s.maxRepetitions} repetitions, ±${formatPercent(s.targetRelativeHalfWidth)} target, confidence ${formatPercent(s.confidence)}, front of ${s.objectives.join(' and ')}${s.screening ? ', screening' : ''}`],
    search
      ? ['Runs', `${d.runsUsed} of the whole space's ${d.gridRuns} (${plural(d.decisions.length, 'configuration')} tried${saved !== null && saved > 0 ? `, ${formatPercent(saved)} fewer` : ''})`]
      : ['Runs', `${d.runsUsed} of the grid's ${d.gridRuns} at ${s.maxRepetitions} repetitions${fewer}`],
    ...(d.budget.maxRuns !== null ? [['Budget', `${d.budget.maxRuns} runs, ${d.budget.runsLeft} left`] as [string, string]] : []),
    ['State', d.open ? (search ? `searching: ${plural(d.undecided.length, 'configuration')} in flight` : `deciding: ${d.undecided.length === 0 ? 'waiting for runs in flight' : `${plural(d.undecided.length, 'configuration')} undecided`}`) : `stopped: ${d.stop ?? 'closed'}`],
  ];
  const rows = d.decisions.map((x) => [x.key, statusText(x.status, color), String(x.n), x.reason]);
  const lines = [renderFields(fields).trimEnd()];
  if (rows.length > 0) lines.push('', renderTable(COLUMNS, rows, { header: color.bold }).trimEnd());
  else lines.push('', search ? 'Nothing tried yet: the first design is proposed at the scheduler\'s next step.' : 'No decisions yet: the first runs have not all landed.');
  return lines.join('\n') + '\n';
}
