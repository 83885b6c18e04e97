import { countConfigurations, getCampaignSummary, listCampaignDecisions, type Database } from '@erg/db';
import type { CampaignDecisions } from '@erg/spec';

/**
 * GET /v1/campaigns/:id/decisions: the strategy, whether it may still add runs and why it
 * stopped, the runs used against the grid at maxRepetitions, the undecided configurations, the
 * run budget left, and every configuration's decision. Null when the campaign does not exist.
 */
export async function campaignDecisionsView(db: Database, campaignId: string): Promise<CampaignDecisions | null> {
  const [summary, configurations, decisions] = await Promise.all([getCampaignSummary(db, campaignId), countConfigurations(db, campaignId), listCampaignDecisions(db, campaignId)]);
  if (!summary) return null;
  const { strategy, repetitions } = summary.campaign.spec;
  const maxRuns = strategy.kind === 'grid' ? null : (strategy.budget?.maxRuns ?? null);
  return {
    campaignId,
    strategy,
    open: summary.campaign.strategyOpen,
    stop: summary.campaign.strategyStop,
    runsUsed: summary.totalRuns,
    gridRuns: configurations * (strategy.kind === 'adaptive' ? strategy.maxRepetitions : strategy.kind === 'search' ? strategy.repetitions : repetitions),
    undecided: decisions.filter((d) => d.status === 'sampling').map((d) => d.key),
    budget: { maxRuns, runsLeft: maxRuns === null ? null : Math.max(0, maxRuns - summary.totalRuns) },
    decisions: decisions.map((d) => ({
      key: d.key, status: d.status as CampaignDecisions['decisions'][number]['status'], n: d.n, reason: d.reason, by: d.by, p: d.p,
      relativeHalfWidth: d.relativeHalfWidth, decidedAt: d.decidedAt.toISOString(), runsUsed: d.runsUsed,
    })),
  };
}
