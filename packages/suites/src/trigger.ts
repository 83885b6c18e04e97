import type { Queue } from 'bullmq';
import {
  createCampaign, findClusterByName, findDeactivated, findSuiteRun, findSuiteRunByKey, insertSuiteRun, lastPassingCampaign,
  type Database, type SuiteRecord, type SuiteRunRecord,
} from '@erg/db';
import { enqueue, withinDeadline } from '@erg/queue';
import { validateCampaign, type SizeLimits } from '@erg/sweep';
import { initialRuns, RegressionPolicy } from '@erg/spec';
import { initialSequentialState } from './judge';
import { SuiteError } from './errors';

export interface TriggerDeps {
  db: Database;
  queue: Queue;
  limits: SizeLimits;
}

export interface TriggerOptions {
  trigger: 'manual' | 'schedule';
  /**
   * Idempotency key: a trigger with a key already used returns that run instead of starting
   * another (a cron slot's job retried after a crash; a CI job retrying its request).
   */
  key: string | null;
}

/** The campaign a new run of the suite is judged against, resolved when the run starts. */
async function baselineFor(db: Database, suite: SuiteRecord, sequential: boolean): Promise<string | null> {
  if (suite.baselinePolicy !== 'pinned') return lastPassingCampaign(db, suite.id, { fullOnly: sequential });
  if (!suite.baselineCampaignId) {
    throw new SuiteError('ERG_SUITE_BASELINE_MISSING', `suite "${suite.name}" pins a baseline campaign that no longer exists; update the suite's baseline`);
  }
  return suite.baselineCampaignId;
}

function isTriggerKeyConflict(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string };
  return e.code === '23505' && e.constraint === 'suite_runs_trigger_key_key';
}

/**
 * Starts a run of a suite: a new campaign from its template and, in the same transaction, the
 * suite run that links them with its baseline, so a crash leaves both or neither. Then wakes the
 * scheduler for the campaign's cluster (best effort: its tick finds the work anyway).
 */
export async function triggerSuite(deps: TriggerDeps, suite: SuiteRecord, opts: TriggerOptions): Promise<{ run: SuiteRunRecord; created: boolean }> {
  if (opts.key) {
    const existing = await findSuiteRunByKey(deps.db, opts.key);
    if (existing) return { run: existing, created: false };
  }
  const validated = validateCampaign(suite.template, deps.limits);
  if (!validated.ok) {
    const detail = validated.issues.map((i) => `campaign.${i.path}: ${i.message}`).join('; ');
    throw new SuiteError('ERG_SUITE_TEMPLATE_INVALID', `suite "${suite.name}" has a campaign template this erg no longer accepts: ${detail}`, { issues: validated.issues });
  }
  const { spec, configurations } = validated;
  const cluster = await findClusterByName(deps.db, spec.cluster!);
  // A suite runs only on its own project's clusters.
  if (!cluster || cluster.projectId !== suite.projectId) throw new SuiteError('ERG_SUITE_UNKNOWN_CLUSTER', `suite "${suite.name}" runs on cluster "${spec.cluster}", which is not registered`, { cluster: spec.cluster });
  // A deactivated project or cluster starts nothing new, on a schedule or by hand.
  const deactivated = await findDeactivated(deps.db, { projectId: suite.projectId, clusterId: cluster.id });
  if (deactivated) {
    throw new SuiteError('ERG_DEACTIVATED', `suite "${suite.name}" cannot start a run: its ${deactivated.kind} "${deactivated.name}" is deactivated`, { [deactivated.kind]: deactivated.name });
  }
  const policy = RegressionPolicy.parse(suite.policy);
  const sequential = policy.sequential;
  const baselineCampaignId = await baselineFor(deps.db, suite, sequential !== undefined);
  // A sequential run starts at the minimum; without a baseline it runs the maximum, since it has
  // nothing to be judged against and becomes the baseline of the runs after it.
  const runs = initialRuns(spec);
  if (sequential) runs.repetitions = baselineCampaignId ? policy.minRepetitions : sequential.maxRepetitions;

  let suiteRunId = '';
  try {
    await createCampaign(deps.db, {
      name: spec.name, execution: 'slurm', clusterId: cluster.id, spec, specText: suite.templateText, creator: { suite: suite.name },
      projectId: suite.projectId,
      configurations, ...runs,
      within: async (tx, campaignId) => {
        suiteRunId = await insertSuiteRun(tx, campaignId, {
          suiteId: suite.id, trigger: opts.trigger, triggerKey: opts.key, baselineCampaignId, webhook: suite.webhookUrl !== null,
          sequential: sequential ? initialSequentialState(sequential, configurations.length, !baselineCampaignId) : null,
        });
      },
    });
  } catch (err) {
    // Two triggers with one key at once: the loser's transaction is rolled back whole.
    if (opts.key && isTriggerKeyConflict(err)) {
      const existing = await findSuiteRunByKey(deps.db, opts.key);
      if (existing) return { run: existing, created: false };
    }
    throw err;
  }
  try {
    await withinDeadline(enqueue(deps.queue, 'cycle', { clusterId: cluster.id, reason: `suite ${suite.name}` }));
  } catch {
    // The scheduler's tick picks the campaign up within one poll interval.
  }
  const run = await findSuiteRun(deps.db, suiteRunId);
  if (!run) throw new Error(`suite run ${suiteRunId} was created but is gone`);
  return { run, created: true };
}
