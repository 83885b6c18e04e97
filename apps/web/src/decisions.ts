// An adaptive campaign's decisions as the campaign page shows them (GET /v1/campaigns/:id/decisions,
// docs/adaptive.md): a line on the strategy and the runs used against the full grid, whether it is
// still deciding or why it stopped, and per configuration its status and the reason. Pure.
import { formatPercent } from './format';
import type { CampaignDecisions, ConfigurationDecision } from './types';

/** Whether a campaign's spec (stored with its defaults) asks for a strategy that decides its runs (adaptive or search). */
export function isAdaptive(spec: unknown): boolean {
  const kind = (spec as { strategy?: { kind?: unknown } } | null | undefined)?.strategy?.kind;
  return kind === 'adaptive' || kind === 'search';
}

/** How each status reads on the page (the API's word first). */
export const STATUS_TEXT: Readonly<Record<ConfigurationDecision['status'], string>> = {
  sampling: 'sampling: wants more runs',
  dropped: 'dropped: dominated',
  front: 'on the front',
  precise: 'precise',
  exhausted: 'exhausted: undecided',
};

export interface DecisionsSummary {
  strategy: string;
  runs: string;
  state: string;
}

export function decisionsSummary(d: CampaignDecisions): DecisionsSummary {
  if (d.strategy.kind === 'grid') return { strategy: 'the full grid', runs: `${d.runsUsed} runs`, state: 'no decisions: every configuration runs its repetitions' };
  const s = d.strategy;
  const saved = d.gridRuns > 0 ? 1 - d.runsUsed / d.gridRuns : 0;
  const budget = d.budget.maxRuns !== null ? `; budget ${d.budget.maxRuns} runs, ${d.budget.runsLeft} left` : '';
  if (s.kind === 'search') {
    return {
      strategy: `search: ${s.repetitions} run(s) per configuration tried, seed ${s.seed}, front of ${s.objectives.join(' and ')}`,
      runs: `${d.runsUsed} of the whole space's ${d.gridRuns} runs, ${d.decisions.length} configurations tried${saved > 0 ? ` (${formatPercent(saved)} fewer)` : ''}${budget}`,
      state: d.open ? `searching: ${d.undecided.length} in flight` : `stopped: ${d.stop ?? 'closed'}`,
    };
  }
  return {
    strategy: `adaptive: ${s.minRepetitions}–${s.maxRepetitions} repetitions, intervals within ±${formatPercent(s.targetRelativeHalfWidth)}, confidence ${formatPercent(s.confidence)}, front of ${s.objectives.join(' and ')}${s.screening ? ', screening' : ''}`,
    runs: `${d.runsUsed} of the grid's ${d.gridRuns} runs at ${s.maxRepetitions} repetitions${saved > 0 ? ` (${formatPercent(saved)} fewer)` : ''}${budget}`,
    state: d.open ? (d.undecided.length > 0 ? `deciding: ${d.undecided.length} undecided (${d.undecided.join(', ')})` : 'deciding: waiting for runs in flight') : `stopped: ${d.stop ?? 'closed'}`,
  };
}

/** Decisions by status, the ones still open first, then dropped, then the settled ones; in the campaign's order within a status. */
export function orderedDecisions(decisions: readonly ConfigurationDecision[]): ConfigurationDecision[] {
  const rank: Record<ConfigurationDecision['status'], number> = { sampling: 0, dropped: 1, front: 2, precise: 3, exhausted: 4 };
  return decisions.map((d, i) => ({ d, i })).sort((a, b) => rank[a.d.status] - rank[b.d.status] || a.i - b.i).map((x) => x.d);
}
