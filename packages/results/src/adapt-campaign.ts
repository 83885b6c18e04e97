import {
  addAdaptiveRuns, closeStrategy, isStrategyOpen, listCampaignDecisions, listConfigurationAttempts, listConfigurationEnergies, storeDecisions, withAdaptiveCampaign,
  type Database, type StoredDecision, withdrawPendingRuns,
} from '@erg/db';
import { plan, type ConfigurationDecision, type ConfigurationRuns, type Plan } from '@erg/adaptive';
import { objectiveFigure, type RunFigures } from '@erg/energy';
import { CampaignSpec, type AdaptiveStrategy, type Objective } from '@erg/spec';
import { countedRuns } from './load-campaign-results';

/** One run's value of an objective, from the figures that count; null where it has none the log scale takes (> 0). */
function objectiveOf(f: RunFigures, o: Objective): number | null {
  const v = objectiveFigure(f, o);
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : null;
}

/** What one step of a campaign's strategy did. */
export interface AdaptStep {
  /** Runs added for the scheduler to submit. */
  added: number;
  /** Pending runs cancelled because their configuration was decided before they were submitted. */
  withdrawn: number;
  plan: Plan;
}

const J_PER_KWH = 3.6e6;

/**
 * One step of an adaptive campaign's strategy, under the campaign's row lock: the figures of its
 * completed runs that count (the results' rule), its runs in flight and those that ended without
 * figures, its decisions so far → @erg/adaptive's plan → the decisions stored, the runs it asks
 * for added as pending runs (the scheduler's claim/submit path takes them from there, exactly once:
 * a repetition exists once), and the strategy closed when the plan stops or the campaign was
 * cancelled. Null for a campaign that is not adaptive or whose strategy is closed. Safe to call at
 * any time, any number of times.
 */
export async function adaptCampaign(db: Database, campaignId: string): Promise<AdaptStep | null> {
  // Most campaigns are grids: they never take the lock.
  if (!(await isStrategyOpen(db, campaignId))) return null;
  return withAdaptiveCampaign(db, campaignId, async (tx, campaign) => {
    if (!campaign.strategyOpen) return null;
    const spec = CampaignSpec.safeParse(campaign.spec);
    if (!spec.success || spec.data.strategy.kind !== 'adaptive') {
      await closeStrategy(tx, campaignId, 'not an adaptive campaign');
      return null;
    }
    if (campaign.cancelRequested) {
      await closeStrategy(tx, campaignId, 'the campaign was cancelled');
      return null;
    }
    const strategy: AdaptiveStrategy = spec.data.strategy;
    const [rows, attempts, decisions] = await Promise.all([listConfigurationEnergies(db, campaignId), listConfigurationAttempts(tx, campaignId), listCampaignDecisions(db, campaignId)]);
    const { configs } = countedRuns(rows);
    const figuresOf = new Map(configs.map((c) => [c.key, c.runs]));
    const previousOf = new Map(decisions.map((d) => [d.key, asDecision(d)]));
    const nodes = spec.data.resources.nodes;

    let spent = { runs: 0, nodeHours: 0, energyKWh: 0 };
    const inputs: ConfigurationRuns[] = attempts.map((a) => {
      const figures = figuresOf.get(a.key) ?? [];
      const runs: [number, number][] = [];
      let failed = a.endedUnsuccessfully;
      for (const f of figures) {
        const x = objectiveOf(f, strategy.objectives[0]);
        const y = objectiveOf(f, strategy.objectives[1]);
        if (x !== null && y !== null) runs.push([x, y]);
        else failed++;
        spent = { runs: spent.runs + 1, nodeHours: spent.nodeHours + ((f.timeS ?? 0) * nodes) / 3600, energyKWh: spent.energyKWh + (f.energyJ ?? 0) / J_PER_KWH };
      }
      spent.runs += a.endedUnsuccessfully;
      const timed = figures.filter((f) => typeof f.timeS === 'number');
      const perRun = timed.length > 0
        ? { nodeHours: (mean(timed.map((f) => f.timeS!)) * nodes) / 3600, energyKWh: mean(timed.map((f) => f.energyJ ?? 0)) / J_PER_KWH }
        : undefined;
      const previous = previousOf.get(a.key);
      return { key: a.key, runs, pending: a.inFlight, failed, ...(perRun ? { perRun } : {}), ...(previous ? { previous } : {}) };
    });
    const p = plan(
      { minRepetitions: strategy.minRepetitions, maxRepetitions: strategy.maxRepetitions, targetRelativeHalfWidth: strategy.targetRelativeHalfWidth, confidence: strategy.confidence, ...(strategy.budget ? { budget: strategy.budget } : {}) },
      inputs,
      spent,
      { objectives: strategy.objectives },
    );
    const idOf = new Map(attempts.map((a) => [a.key, a]));
    await storeDecisions(tx, campaignId, spent.runs, p.configurations.map((d) => ({
      configurationId: idOf.get(d.key)!.configurationId, status: d.status, n: d.n, reason: d.reason, by: d.by ?? null, p: d.p ?? null, relativeHalfWidth: d.relativeHalfWidth,
    })));
    // Repetitions of configurations decided meanwhile are no longer needed, if not yet submitted.
    const decidedIds = p.configurations.filter((d) => d.status !== 'sampling' && idOf.get(d.key)!.inFlight > 0).map((d) => idOf.get(d.key)!.configurationId);
    const withdrawn = await withdrawPendingRuns(tx, decidedIds, 'not needed: its configuration was decided (erg decisions shows why)');
    const added = await addAdaptiveRuns(
      tx, campaignId,
      p.submit.map((s) => ({ configurationId: idOf.get(s.key)!.configurationId, after: idOf.get(s.key)!.maxRepetition, runs: s.runs })),
      'adaptive: another repetition where it may change a decision',
    );
    if (p.stop) await closeStrategy(tx, campaignId, p.stop.reason);
    return { added, withdrawn, plan: p };
  });
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** A stored decision as plan() takes it back (its statuses other than sampling are kept). */
function asDecision(d: StoredDecision): ConfigurationDecision {
  return {
    key: d.key, status: d.status as ConfigurationDecision['status'], n: d.n, reason: d.reason, relativeHalfWidth: d.relativeHalfWidth,
    ...(d.by ? { by: d.by } : {}), ...(d.p !== null ? { p: d.p } : {}),
  };
}
