import { randomUUID } from 'node:crypto';
import type { SecretBox } from '@erg/secrets';
import { RegressionPolicy, TERMINAL_RUN_STATES, type RegressionPolicyOutput, type RunOrder } from '@erg/spec';
import { addAdaptiveRuns, listConfigurationAttempts, type AdaptiveRunsToAdd, type ConfigurationAttempts } from './strategy';
import { clientOf, poolOf, prismaOf, withTransaction, type Database, type Transaction } from './client';

/** A suite, with its webhook secret as stored (sealed; openSuiteSecret opens it). */
export interface SuiteRecord {
  id: string;
  name: string;
  projectId: string;
  description: string | null;
  /** The campaign spec every run of the suite submits (validated, defaults applied). */
  template: unknown;
  templateText: string | null;
  cron: string | null;
  timezone: string;
  /** `last-passing` or `pinned`. */
  baselinePolicy: string;
  baselineCampaignId: string | null;
  /** A RegressionPolicy as stored. */
  policy: unknown;
  webhookUrl: string | null;
  webhookSecret: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One run of a suite: its campaign, baseline, verdict and webhook delivery. */
export interface SuiteRunRecord {
  id: string;
  suiteId: string;
  campaignId: string;
  /** `manual` or `schedule`. */
  trigger: string;
  baselineCampaignId: string | null;
  /** `running`, then pass / regressed / improved / inconclusive. */
  status: string;
  reasons: string[];
  /** A CampaignVerdict as stored; null without a baseline. */
  verdict: unknown;
  finishedAt: Date | null;
  /** null: no webhook; pending → delivered | failed. */
  webhookStatus: string | null;
  webhookAttempts: number;
  webhookError: string | null;
  webhookDeliveredAt: Date | null;
  createdAt: Date;
  /** Sequential suites: looks taken (0 until the first judgment). */
  look: number;
  /** Sequential suites: the latest look as @erg/suites records it; null for the fixed design. */
  sequential: unknown;
}

const SUITE_RUN_COLUMNS = {
  id: true, suiteId: true, campaignId: true, trigger: true, baselineCampaignId: true, status: true, reasons: true, verdict: true, finishedAt: true,
  webhookStatus: true, webhookAttempts: true, webhookError: true, webhookDeliveredAt: true, createdAt: true, look: true, sequential: true,
} as const;

/** What a suite is made of, as validated by @erg/suites. */
export interface SuiteInput {
  name: string;
  /** The project that owns the suite (and the campaigns it starts). */
  projectId: string;
  description: string | null;
  template: unknown;
  templateText: string | null;
  cron: string | null;
  timezone: string;
  baselinePolicy: 'last-passing' | 'pinned';
  baselineCampaignId: string | null;
  policy: RegressionPolicyOutput;
  webhookUrl: string | null;
  /** Plaintext; stored sealed for the suite's row. */
  webhookSecret: string | null;
}

/**
 * The sealed-key context of a suite's webhook secret (suites.webhook_secret). The context names the
 * row, so a sealed value copied to another row does not open; ids never change, names could be
 * reused after a delete.
 */
export const suiteSecretContext = (suiteId: string): string => `suite:${suiteId}:webhook_secret`;

/** The suite's webhook secret in plaintext for signing a delivery; null when the suite has none. */
export function openSuiteSecret(secrets: SecretBox, suite: Pick<SuiteRecord, 'id' | 'webhookSecret'>): string | null {
  return suite.webhookSecret === null ? null : secrets.openStored(suite.webhookSecret, suiteSecretContext(suite.id));
}

function suiteData(input: SuiteInput, id: string, secrets: SecretBox) {
  return {
    ...input,
    template: input.template as object,
    policy: input.policy as object,
    webhookSecret: input.webhookSecret === null ? null : secrets.seal(input.webhookSecret, suiteSecretContext(id)),
  };
}

export async function createSuite(db: Database, input: SuiteInput, secrets: SecretBox): Promise<SuiteRecord> {
  // The id is chosen here, not by Postgres: the sealed secret's context names it.
  const id = randomUUID();
  return prismaOf(db).suite.create({ data: { ...suiteData(input, id, secrets), id } });
}

/** Replaces every field of an existing suite; null when there is none of that name. */
export async function replaceSuite(db: Database, name: string, input: SuiteInput, secrets: SecretBox): Promise<SuiteRecord | null> {
  const existing = await prismaOf(db).suite.findUnique({ where: { name }, select: { id: true } });
  if (!existing) return null;
  const result = await prismaOf(db).suite.updateManyAndReturn({ where: { id: existing.id }, data: suiteData(input, existing.id, secrets) });
  return result[0] ?? null;
}

/** Deletes a suite and its run records (their campaigns stay); returns its id. */
export async function deleteSuite(db: Database, name: string): Promise<{ id: string } | null> {
  const result = await poolOf(db).query<{ id: string }>(`DELETE FROM suites WHERE name = $1 RETURNING id`, [name]);
  return result.rows[0] ?? null;
}

export async function findSuiteByName(db: Database, name: string): Promise<SuiteRecord | null> {
  return prismaOf(db).suite.findUnique({ where: { name } });
}

export async function findSuite(db: Database, id: string): Promise<SuiteRecord | null> {
  return prismaOf(db).suite.findUnique({ where: { id } });
}

/** Suites of these projects (every suite when `projectIds` is null or absent). */
export async function listSuites(db: Database, projectIds: string[] | null = null): Promise<SuiteRecord[]> {
  return prismaOf(db).suite.findMany({ where: projectIds === null ? {} : { projectId: { in: projectIds } }, orderBy: { name: 'asc' } });
}

/** The latest run of each of these suites. */
export async function lastSuiteRuns(db: Database, suiteIds: string[]): Promise<Map<string, SuiteRunRecord>> {
  const rows = await prismaOf(db).suiteRun.findMany({
    where: { suiteId: { in: suiteIds } },
    select: SUITE_RUN_COLUMNS,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    distinct: ['suiteId'],
  });
  return new Map(rows.map((r) => [r.suiteId, r]));
}

/**
 * The campaign of the suite's latest finished run that passed or improved: the `last-passing`
 * baseline. Runs that regressed or were inconclusive never become a baseline, so one bad night
 * does not move the bar.
 */
export async function lastPassingCampaign(db: Database, suiteId: string, opts: { fullOnly?: boolean } = {}): Promise<string | null> {
  // fullOnly (sequential suites): a run that stopped before the maximum has too few repetitions
  // to judge the next against; runs of the fixed design (sequential null) count as full.
  const { rows } = await poolOf(db).query<{ campaign_id: string }>(
    `SELECT campaign_id FROM suite_runs
     WHERE suite_id = $1 AND status IN ('pass', 'improved') AND (NOT $2 OR sequential IS NULL OR (sequential->>'full')::boolean)
     ORDER BY finished_at DESC NULLS LAST, id DESC LIMIT 1`,
    [suiteId, opts.fullOnly ?? false],
  );
  return rows[0]?.campaign_id ?? null;
}

export interface NewSuiteRun {
  suiteId: string;
  trigger: 'manual' | 'schedule';
  triggerKey: string | null;
  baselineCampaignId: string | null;
  webhook: boolean;
  /** A sequential suite's state before its first look; null for the fixed design. */
  sequential?: unknown;
}

/** Inserts a suite run inside the transaction that creates its campaign (NewCampaign.within). */
export async function insertSuiteRun(tx: Transaction, campaignId: string, run: NewSuiteRun): Promise<string> {
  const result = await clientOf(tx).query<{ id: string }>(
    `INSERT INTO suite_runs (id, suite_id, campaign_id, trigger, trigger_key, baseline_campaign_id, webhook_status, sequential)
     VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7) RETURNING id`,
    [run.suiteId, campaignId, run.trigger, run.triggerKey, run.baselineCampaignId, run.webhook ? 'pending' : null, run.sequential == null ? null : JSON.stringify(run.sequential)],
  );
  return result.rows[0]!.id;
}

export async function findSuiteRunByKey(db: Database, triggerKey: string): Promise<SuiteRunRecord | null> {
  return prismaOf(db).suiteRun.findUnique({ where: { triggerKey }, select: SUITE_RUN_COLUMNS });
}

export async function findSuiteRun(db: Database, id: string): Promise<SuiteRunRecord | null> {
  return prismaOf(db).suiteRun.findUnique({ where: { id }, select: SUITE_RUN_COLUMNS });
}

export async function listSuiteRuns(db: Database, suiteId: string, opts: { limit: number; offset: number }): Promise<{ items: SuiteRunRecord[]; total: number }> {
  const [items, total] = await Promise.all([
    prismaOf(db).suiteRun.findMany({ where: { suiteId }, select: SUITE_RUN_COLUMNS, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: opts.limit, skip: opts.offset }),
    prismaOf(db).suiteRun.count({ where: { suiteId } }),
  ]);
  return { items, total };
}

/**
 * Suite runs still `running` whose campaign has no run left in a non-terminal state, and whose
 * completed runs all have their energy figures — or finished long enough ago (`settleMs`) that
 * none are coming: a run's state turns terminal a moment before its energy is computed, and a
 * verdict taken in between would miss that repetition.
 */
export async function suiteRunsReadyToJudge(db: Database, opts: { limit?: number; settleMs?: number } = {}): Promise<SuiteRunRecord[]> {
  const ids = await poolOf(db).query<{ id: string }>(
    `SELECT s.id FROM suite_runs s
     WHERE s.status = 'running'
       AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.campaign_id = s.campaign_id AND r.state::text <> ALL($1::text[]))
       AND NOT EXISTS (SELECT 1 FROM campaigns c WHERE c.id = s.campaign_id AND c.strategy_open)
       AND NOT EXISTS (
         SELECT 1 FROM runs r WHERE r.campaign_id = s.campaign_id AND r.state = 'completed'
           AND NOT EXISTS (SELECT 1 FROM run_energy e WHERE e.run_id = r.id)
           AND coalesce(r.finalized_at, r.updated_at) > now() - make_interval(secs => $3::double precision / 1000))
     ORDER BY s.created_at LIMIT $2`,
    [TERMINAL_RUN_STATES, opts.limit ?? 100, opts.settleMs ?? 30_000],
  );
  if (ids.rows.length === 0) return [];
  return prismaOf(db).suiteRun.findMany({ where: { id: { in: ids.rows.map((r) => r.id) } }, select: SUITE_RUN_COLUMNS, orderBy: { createdAt: 'asc' } });
}

export interface SuiteRunOutcome {
  status: 'pass' | 'regressed' | 'improved' | 'inconclusive';
  reasons: string[];
  verdict: unknown;
}

/**
 * Records a suite run's verdict: running → judged, once. False when another process got there
 * first, so only one of them goes on to announce it.
 */
export async function finishSuiteRun(db: Database, id: string, outcome: SuiteRunOutcome, look?: { at: number; sequential: unknown }): Promise<boolean> {
  // A sequential run is finished only at the look it was judged at: another process that has
  // moved it on to the next look meanwhile wins, and this verdict (on fewer runs) is dropped.
  const result = await poolOf(db).query(
    look
      ? `UPDATE suite_runs SET status = $2, reasons = $3, verdict = $4, finished_at = now(), look = $5 + 1, sequential = $6
         WHERE id = $1 AND status = 'running' AND look = $5`
      : `UPDATE suite_runs SET status = $2, reasons = $3, verdict = $4, finished_at = now() WHERE id = $1 AND status = 'running'`,
    [id, outcome.status, outcome.reasons, outcome.verdict === null ? null : JSON.stringify(outcome.verdict), ...(look ? [look.at, JSON.stringify(look.sequential)] : [])],
  );
  return result.rowCount === 1;
}

/**
 * A sequential suite run's look that leaves it undecided: moves it from look `at` to `at + 1`
 * and adds one pending repetition per undecided configuration, in one transaction, in the
 * campaign's run order (its design columns: the look's runs are one block, shuffled by the
 * campaign's seed). The compare-and-set on `look` (its row lock held to the commit) makes the
 * look happen once however many processes judge the run; a repetition that exists already is
 * skipped (unique per configuration). False when another process took this look, or the run is
 * no longer running.
 */
export async function addSuiteRunRepetitions(
  db: Database, id: string, at: number, adds: readonly Omit<AdaptiveRunsToAdd, 'runs'>[], sequential: unknown,
): Promise<boolean> {
  return withTransaction(db, async (tx) => {
    const { rows } = await tx.query<{ campaign_id: string; design_order: RunOrder; design_seed: number | null }>(
      `UPDATE suite_runs s SET look = look + 1, sequential = $3 FROM campaigns c
       WHERE s.id = $1 AND s.look = $2 AND s.status = 'running' AND c.id = s.campaign_id
       RETURNING s.campaign_id, c.design_order, c.design_seed`,
      [id, at, JSON.stringify(sequential)],
    );
    const row = rows[0];
    if (!row) return false;
    const design = { order: row.design_order, seed: row.design_seed };
    await addAdaptiveRuns(tx, row.campaign_id, design, adds.map((a) => ({ ...a, runs: 1 })), `sequential suite: look ${at + 1} undecided`);
    return true;
  });
}

/** Finished suite runs whose webhook is still to be delivered. */
export async function pendingWebhooks(db: Database, limit = 100): Promise<SuiteRunRecord[]> {
  return prismaOf(db).suiteRun.findMany({ where: { webhookStatus: 'pending', status: { not: 'running' } }, select: SUITE_RUN_COLUMNS, orderBy: { finishedAt: 'asc' }, take: limit });
}

/** One delivery attempt's outcome: delivered, failed for good, or still pending (will be retried). */
export async function recordWebhookAttempt(db: Database, id: string, outcome: { status: 'pending' | 'delivered' | 'failed'; error: string | null }): Promise<void> {
  await poolOf(db).query(
    `UPDATE suite_runs SET webhook_attempts = webhook_attempts + 1, webhook_status = $2, webhook_error = $3,
       webhook_delivered_at = CASE WHEN $2 = 'delivered' THEN now() ELSE webhook_delivered_at END
     WHERE id = $1 AND webhook_status = 'pending'`,
    [id, outcome.status, outcome.error],
  );
}

/** A suite's regression policy, with its defaults; null when there is no such suite. */
export async function findSuitePolicy(db: Database, suiteId: string): Promise<RegressionPolicyOutput | null> {
  const row = await prismaOf(db).suite.findUnique({ where: { id: suiteId }, select: { policy: true } });
  return row ? RegressionPolicy.parse(row.policy) : null;
}

/** What judging a campaign a suite started defaults to: its suite run's baseline and the suite's policy. */
export interface SuiteRunBaseline {
  baselineCampaignId: string | null;
  policy: RegressionPolicyOutput;
}

/** The baseline and policy of the suite run that started the campaign; null when no suite started it. */
export async function findSuiteRunBaseline(db: Database, campaignId: string): Promise<SuiteRunBaseline | null> {
  const row = await prismaOf(db).suiteRun.findUnique({
    where: { campaignId },
    select: { baselineCampaignId: true, suite: { select: { policy: true } } },
  });
  return row ? { baselineCampaignId: row.baselineCampaignId, policy: RegressionPolicy.parse(row.suite.policy) } : null;
}

/** A suite run's configurations with their repetitions scheduled so far and how many ended other than completed. */
export async function suiteRunConfigurations(db: Database, campaignId: string): Promise<ConfigurationAttempts[]> {
  return listConfigurationAttempts(poolOf(db), campaignId);
}
