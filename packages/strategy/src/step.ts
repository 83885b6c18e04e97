import { runNodes } from '@erg/spec';
import {
  addAdaptiveRuns, closeStrategy, isStrategyOpen, listCampaignDecisions, listConfigurationAttempts, listConfigurationEnergies, storeDecisions, withAdaptiveCampaign,
  type Database, type StoredDecision, withdrawPendingRuns,
} from '@erg/db';
import { addTo, observe, type AdaptStep } from './observed';
import { plan, type ConfigurationDecision, type ConfigurationRuns } from './plan';
import { searchStep } from './search';
import type { SearchStepRunner } from './search-runner';
import { searchCampaign, searchParallel } from './search-step';

/** How a step runs the parts that cost more than the event loop should give. */
export interface AdaptOptions {
  /**
   * Runs a search's step (default: searchStep, inline). The scheduler passes one that runs it in a
   * worker thread (search-runner.ts): fitting the surrogate takes 0.2-0.6 s.
   */
  searchStep?: SearchStepRunner;
}

/**
 * One step of an adaptive campaign's strategy, under the campaign's row lock: the figures of its
 * completed runs that count (the results' rule), its runs in flight and those that ended without
 * figures, its decisions so far → plan (plan.ts) → the decisions stored, the runs it asks
 * for added as pending runs (the scheduler's claim/submit path takes them from there, exactly once:
 * a repetition exists once), and the strategy closed when the plan stops or the campaign was
 * cancelled. Null for a campaign that is not adaptive or whose strategy is closed. Safe to call at
 * any time, any number of times.
 */
export async function adaptCampaign(db: Database, campaignId: string, options: AdaptOptions = {}): Promise<AdaptStep | null> {
  // Most campaigns are grids: they never take the lock.
  if (!(await isStrategyOpen(db, campaignId))) return null;
  return withAdaptiveCampaign(db, campaignId, async (tx, campaign) => {
    if (!campaign.strategyOpen) return null;
    // Typed by @erg/db (readStoredSpec): a spec that no longer parses threw, naming the campaign.
    const { spec } = campaign;
    if (spec.strategy.kind === 'grid') {
      await closeStrategy(tx, campaignId, 'not an adaptive campaign');
      return null;
    }
    if (campaign.cancelRequested) {
      await closeStrategy(tx, campaignId, 'the campaign was cancelled');
      return null;
    }
    const strategy = spec.strategy;
    const [rows, attempts, decisions] = await Promise.all([listConfigurationEnergies(db, campaignId), listConfigurationAttempts(tx, campaignId), listCampaignDecisions(db, campaignId)]);
    // A configuration whose parameters are not at hand yet (no run counted) spends nothing, so its node count does not matter.
    const nodesOf = (parameters: Record<string, unknown>) => {
      try {
        return runNodes(spec.resources, parameters as Record<string, string | number | boolean>);
      } catch {
        return typeof spec.resources.nodes === 'number' ? spec.resources.nodes : 1;
      }
    };
    const observed = observe(rows, attempts, strategy.objectives, nodesOf);
    if (strategy.kind === 'search') return searchCampaign(tx, campaignId, campaign.design, strategy, observed, searchParallel(strategy), options.searchStep ?? searchStep);
    const previousOf = new Map(decisions.map((d) => [d.key, asDecision(d)]));
    const inputs: ConfigurationRuns[] = observed.configurations.map((c) => {
      const previous = previousOf.get(c.key);
      return { key: c.key, runs: c.runs, pending: c.pending, failed: c.failed, ...(c.perRun ? { perRun: c.perRun } : {}), ...(previous ? { previous } : {}) };
    });
    const p = plan(
      {
        minRepetitions: strategy.minRepetitions, maxRepetitions: strategy.maxRepetitions, targetRelativeHalfWidth: strategy.targetRelativeHalfWidth, confidence: strategy.confidence,
        screening: strategy.screening, ...(strategy.budget ? { budget: strategy.budget } : {}),
      },
      inputs,
      observed.spent,
      { objectives: strategy.objectives },
    );
    const idOf = observed.byKey;
    await storeDecisions(tx, campaignId, observed.spent.runs, p.configurations.map((d) => ({
      configurationId: idOf.get(d.key)!.configurationId, status: d.status, n: d.n, reason: d.reason, by: d.by ?? null, p: d.p ?? null, relativeHalfWidth: d.relativeHalfWidth,
    })));
    // Repetitions of configurations decided meanwhile are no longer needed, if not yet submitted.
    const decidedIds = p.configurations.filter((d) => d.status !== 'sampling' && idOf.get(d.key)!.pending > 0).map((d) => idOf.get(d.key)!.configurationId);
    const withdrawn = await withdrawPendingRuns(tx, decidedIds, 'not needed: its configuration was decided (erg decisions shows why)');
    const added = await addAdaptiveRuns(
      tx, campaignId, campaign.design,
      p.submit.map((s) => addTo(idOf.get(s.key)!, s.runs)),
      'adaptive: another repetition where it may change a decision',
    );
    if (p.stop) await closeStrategy(tx, campaignId, p.stop.reason);
    return { kind: 'adaptive', added, withdrawn, undecided: p.undecided.length, stop: p.stop };
  });
}

/** A stored decision as plan() takes it back (its statuses other than sampling are kept). */
function asDecision(d: StoredDecision): ConfigurationDecision {
  return {
    key: d.key, status: d.status as ConfigurationDecision['status'], n: d.n, reason: d.reason, relativeHalfWidth: d.relativeHalfWidth,
    ...(d.by ? { by: d.by } : {}), ...(d.p !== null ? { p: d.p } : {}),
  };
}
