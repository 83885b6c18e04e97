import {
  addAdaptiveRuns, closeStrategy, isStrategyOpen, listCampaignDecisions, listConfigurationAttempts, listConfigurationEnergies, storeDecisions, withAdaptiveCampaign,
  type ConfigurationAttempts, type Database, type StoredDecision, withdrawPendingRuns,
} from '@erg/db';
import { plan, searchStep, type ConfigurationDecision, type ConfigurationRuns } from '@erg/adaptive';
import { objectiveFigure, type RunFigures } from '@erg/energy';
import type { Objective } from '@erg/spec';
import { countedRuns } from './load-campaign-results';
import { searchCampaign, searchParallel } from './search-campaign';

/** One run's value of an objective, from the figures that count; null where it has none the log scale takes (> 0). */
function objectiveOf(f: RunFigures, o: Objective): number | null {
  const v = objectiveFigure(f, o);
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : null;
}

/** How a step runs the parts that cost more than the event loop should give. */
export interface AdaptOptions {
  /**
   * Runs a search's step (default: @erg/adaptive's searchStep, inline). The scheduler passes one
   * that runs it in a worker thread: fitting the surrogate takes 0.2-0.6 s.
   */
  searchStep?: SearchStepRunner;
}

export type SearchStepRunner = (...args: Parameters<typeof searchStep>) => ReturnType<typeof searchStep> | Promise<ReturnType<typeof searchStep>>;

/** What one step of a campaign's strategy did. */
export interface AdaptStep {
  /** Which strategy stepped. */
  kind: 'adaptive' | 'search';
  /** Runs added for the scheduler to submit. */
  added: number;
  /** Pending runs cancelled because their configuration was decided before they were submitted. */
  withdrawn: number;
  /** Configurations still undecided (adaptive) or in flight (search). */
  undecided: number;
  /** Why the strategy stopped (it closed in this step), or null while it goes on. */
  stop: null | { why: string; reason: string };
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
    const observed = observe(rows, attempts, strategy.objectives, spec.resources.nodes);
    if (strategy.kind === 'search') return searchCampaign(tx, campaignId, strategy, observed, searchParallel(strategy), options.searchStep ?? searchStep);
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
      tx, campaignId,
      p.submit.map((s) => ({ configurationId: idOf.get(s.key)!.configurationId, after: idOf.get(s.key)!.maxRepetition, runs: s.runs })),
      'adaptive: another repetition where it may change a decision',
    );
    if (p.stop) await closeStrategy(tx, campaignId, p.stop.reason);
    return { kind: 'adaptive', added, withdrawn, undecided: p.undecided.length, stop: p.stop };
  });
}

/** One configuration as a strategy sees it: its measured objectives, its attempts, what a run of it costs. */
export interface ObservedConfiguration {
  key: string;
  configurationId: string;
  parameters: Record<string, unknown>;
  /** Completed runs with both objectives (> 0). */
  runs: [number, number][];
  /** Runs in flight. */
  pending: number;
  /** Runs that ended without both objectives (failed, cancelled, or unmeasured). */
  failed: number;
  maxRepetition: number;
  /** The mean cost of its runs so far (for the node-hour and energy budgets). */
  perRun?: { nodeHours: number; energyKWh: number };
}

export interface Observed {
  configurations: ObservedConfiguration[];
  byKey: Map<string, ObservedConfiguration>;
  /** Completed and ended runs (in-flight ones are counted from `pending`). */
  spent: { runs: number; nodeHours: number; energyKWh: number };
}

/** The figures that count (the results' rule) and the attempts, per configuration in the campaign's order. */
function observe(rows: Parameters<typeof countedRuns>[0], attempts: readonly ConfigurationAttempts[], objectives: readonly [Objective, Objective], nodes: number): Observed {
  const { configs } = countedRuns(rows);
  const byConfig = new Map(configs.map((c) => [c.key, c]));
  const spent = { runs: 0, nodeHours: 0, energyKWh: 0 };
  const configurations = attempts.map((a): ObservedConfiguration => {
    const figures = byConfig.get(a.key)?.runs ?? [];
    const runs: [number, number][] = [];
    let failed = a.endedUnsuccessfully;
    for (const f of figures) {
      const x = objectiveOf(f, objectives[0]);
      const y = objectiveOf(f, objectives[1]);
      if (x !== null && y !== null) runs.push([x, y]);
      else failed++;
      spent.runs += 1;
      spent.nodeHours += ((f.timeS ?? 0) * nodes) / 3600;
      spent.energyKWh += (f.energyJ ?? 0) / J_PER_KWH;
    }
    spent.runs += a.endedUnsuccessfully;
    const timed = figures.filter((f) => typeof f.timeS === 'number');
    const perRun = timed.length > 0
      ? { nodeHours: (mean(timed.map((f) => f.timeS!)) * nodes) / 3600, energyKWh: mean(timed.map((f) => f.energyJ ?? 0)) / J_PER_KWH }
      : undefined;
    return {
      key: a.key, configurationId: a.configurationId, parameters: byConfig.get(a.key)?.parameters ?? {}, runs, pending: a.inFlight, failed, maxRepetition: a.maxRepetition,
      ...(perRun ? { perRun } : {}),
    };
  });
  return { configurations, byKey: new Map(configurations.map((c) => [c.key, c])), spent };
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
