import type pg from 'pg';
import { randomUUID } from 'node:crypto';
import { TERMINAL_RUN_STATES, type CampaignRunOrder, type CampaignSpec, type RunOrder } from '@erg/spec';
import { addedRunOrder, type OrderDesign } from '@erg/sweep';
import { plainArrayLiteral } from './array-literal';
import { poolOf, withTransaction, type Database } from './client';
import { stateListSql } from './state-sql';
import { readStoredSpec } from './stored-spec';

/**
 * What a campaign's strategy (adaptive or search, @erg/strategy) reads and writes (issue 16): its
 * runs in flight and ended per configuration, its decisions, and the runs it adds. @erg/strategy's
 * adaptCampaign holds the campaign's row lock (withAdaptiveCampaign) for one step, so two
 * scheduler processes never plan it at once; each repetition is a unique (configuration,
 * repetition), so a run is added once.
 */

/** An adaptive campaign's row, locked for one step of its strategy. */
export interface AdaptiveCampaignRow {
  id: string;
  /** Read back by readStoredSpec: a spec that no longer parses throws, and the step rolls back. */
  spec: CampaignSpec;
  strategyOpen: boolean;
  cancelRequested: boolean;
  /** The order its runs follow (its design columns): the runs a step adds follow it too. */
  design: CampaignRunOrder;
}

/** Whether a campaign's strategy may still add runs (read without a lock: a cheap check before taking one). */
export async function isStrategyOpen(db: Database, campaignId: string): Promise<boolean> {
  const { rows } = await poolOf(db).query<{ strategy_open: boolean }>('SELECT strategy_open FROM campaigns WHERE id = $1', [campaignId]);
  return rows[0]?.strategy_open ?? false;
}

/**
 * Runs `work` holding the campaign's row lock; null when the campaign does not exist or another
 * step holds the lock. A step never waits for another: waiting would hold a pooled connection
 * while the holder needs the pool for its reads, and the step it skips is not lost — the step
 * holding the lock, a later run's, or the tick's (for a campaign with nothing in flight) sees
 * the same figures.
 */
export async function withAdaptiveCampaign<T>(db: Database, campaignId: string, work: (tx: pg.PoolClient, campaign: AdaptiveCampaignRow) => Promise<T>): Promise<T | null> {
  return withTransaction(db, async (tx) => {
    const { rows } = await tx.query<{ id: string; spec: unknown; strategy_open: boolean; cancel_requested_at: Date | null; design_order: RunOrder; design_seed: number | null }>(
      'SELECT id, spec, strategy_open, cancel_requested_at, design_order, design_seed FROM campaigns WHERE id = $1 FOR UPDATE SKIP LOCKED',
      [campaignId],
    );
    const r = rows[0];
    if (!r) return null;
    return work(tx, {
      id: r.id, spec: readStoredSpec(r.id, r.spec), strategyOpen: r.strategy_open, cancelRequested: r.cancel_requested_at !== null,
      design: { order: r.design_order, seed: r.design_seed },
    });
  });
}

/** One configuration's attempts: runs in flight, runs that ended other than completed, and its highest repetition. */
export interface ConfigurationAttempts {
  configurationId: string;
  key: string;
  /** Its position in the campaign's listed configurations (what the run order names it by). */
  position: number;
  inFlight: number;
  endedUnsuccessfully: number;
  maxRepetition: number;
}

const TERMINAL_SQL = stateListSql(TERMINAL_RUN_STATES);

export async function listConfigurationAttempts(tx: Pick<pg.PoolClient, 'query'>, campaignId: string): Promise<ConfigurationAttempts[]> {
  const { rows } = await tx.query<{ id: string; key: string; position: number; in_flight: number; ended_unsuccessfully: number; max_repetition: number }>(
    `SELECT c.id, c.key, c.position,
            count(r.id) FILTER (WHERE r.state NOT IN ${TERMINAL_SQL})::int AS in_flight,
            count(r.id) FILTER (WHERE r.state IN ${TERMINAL_SQL} AND r.state <> 'completed')::int AS ended_unsuccessfully,
            coalesce(max(r.repetition), 0)::int AS max_repetition
     FROM configurations c LEFT JOIN runs r ON r.configuration_id = c.id
     WHERE c.campaign_id = $1 GROUP BY c.id, c.key, c.position ORDER BY c.position`,
    [campaignId],
  );
  return rows.map((r) => ({
    configurationId: r.id, key: r.key, position: r.position, inFlight: r.in_flight, endedUnsuccessfully: r.ended_unsuccessfully, maxRepetition: r.max_repetition,
  }));
}

/** A stored decision (campaign_decisions), in @erg/strategy's ConfigurationDecision shape plus when and after how many runs. */
export interface StoredDecision {
  key: string;
  status: string;
  n: number;
  reason: string;
  by: string | null;
  p: number | null;
  relativeHalfWidth: [number, number] | null;
  decidedAt: Date;
  runsUsed: number;
}

export async function listCampaignDecisions(db: Database, campaignId: string): Promise<StoredDecision[]> {
  const { rows } = await poolOf(db).query<{ key: string; status: string; n: number; reason: string; by_key: string | null; p: number | null; half_width_first: number | null; half_width_second: number | null; decided_at: Date; runs_used: number }>(
    `SELECT c.key, d.status, d.n, d.reason, d.by_key, d.p, d.half_width_first, d.half_width_second, d.decided_at, d.runs_used
     FROM campaign_decisions d JOIN configurations c ON c.id = d.configuration_id WHERE d.campaign_id = $1 ORDER BY c.position`,
    [campaignId],
  );
  return rows.map((r) => ({
    key: r.key, status: r.status, n: r.n, reason: r.reason, by: r.by_key, p: r.p,
    relativeHalfWidth: r.half_width_first === null || r.half_width_second === null ? null : [r.half_width_first, r.half_width_second],
    decidedAt: r.decided_at, runsUsed: r.runs_used,
  }));
}

/** A decision to store for a configuration (by id). */
export interface DecisionToStore {
  configurationId: string;
  status: string;
  n: number;
  reason: string;
  by: string | null;
  p: number | null;
  relativeHalfWidth: [number, number] | null;
}

/**
 * Stores decisions: a configuration's row is updated only while it is `sampling` (the others are
 * final) — unless `standing`: a search's statuses are where each configuration stands now (a
 * later result may push a front member off the front), so each step replaces them.
 */
export async function storeDecisions(tx: Pick<pg.PoolClient, 'query'>, campaignId: string, runsUsed: number, decisions: readonly DecisionToStore[], options: { standing?: boolean } = {}): Promise<void> {
  if (decisions.length === 0) return;
  await tx.query(
    `INSERT INTO campaign_decisions (configuration_id, campaign_id, status, n, reason, by_key, p, half_width_first, half_width_second, runs_used)
     SELECT u.id, $1, u.status, u.n, u.reason, u.by_key, u.p, u.h1, u.h2, $2
     FROM unnest($3::uuid[], $4::text[], $5::int[], $6::text[], $7::text[], $8::float8[], $9::float8[], $10::float8[]) AS u(id, status, n, reason, by_key, p, h1, h2)
     ON CONFLICT (configuration_id) DO UPDATE SET status = EXCLUDED.status, n = EXCLUDED.n, reason = EXCLUDED.reason, by_key = EXCLUDED.by_key, p = EXCLUDED.p,
       half_width_first = EXCLUDED.half_width_first, half_width_second = EXCLUDED.half_width_second, decided_at = now(), runs_used = EXCLUDED.runs_used
     WHERE campaign_decisions.status = 'sampling' OR $11`,
    [
      campaignId, runsUsed, decisions.map((d) => d.configurationId), decisions.map((d) => d.status), decisions.map((d) => d.n), decisions.map((d) => d.reason),
      decisions.map((d) => d.by), decisions.map((d) => d.p), decisions.map((d) => d.relativeHalfWidth?.[0] ?? null), decisions.map((d) => d.relativeHalfWidth?.[1] ?? null),
      options.standing ?? false,
    ],
  );
}

/**
 * Runs to add to one configuration: repetitions after+1 … after+runs. `position` is the
 * configuration's position in the campaign's listed configurations (configurations.position): the
 * stable name the run order shuffles by, where its id is a random uuid.
 */
export interface AdaptiveRunsToAdd {
  configurationId: string;
  position: number;
  after: number;
  runs: number;
}

/**
 * Adds pending runs, each with its `pending` event, positions after the campaign's highest, in the
 * campaign's run order (`design`, its columns; @erg/sweep's addedRunOrder): the added runs form
 * blocks by repetition, lower blocks first, each block in the order the design gives that set of
 * configurations — so an adaptive campaign's, a search's and a sequential suite's further
 * repetitions interleave as a grid's do. A repetition that exists already is skipped (unique per
 * configuration): the step is safe to repeat. Returns the runs added.
 */
export async function addAdaptiveRuns(
  tx: Pick<pg.PoolClient, 'query'>, campaignId: string, design: OrderDesign, adds: readonly AdaptiveRunsToAdd[], detail: string,
): Promise<number> {
  const idOf = new Map(adds.map((a) => [a.position, a.configurationId]));
  const order = addedRunOrder(adds.map((a) => ({ configuration: a.position, after: a.after, runs: a.runs })), design);
  if (order.length === 0) return 0;
  const rows = order.map((r) => ({ id: randomUUID(), configurationId: idOf.get(r.configuration)!, repetition: r.repetition }));
  const { rowCount } = await tx.query(
    `WITH base AS (SELECT coalesce(max(position), -1) AS p FROM runs WHERE campaign_id = $1),
     r AS (
       INSERT INTO runs (id, campaign_id, configuration_id, repetition, position)
       SELECT u.id, $1, u.configuration_id, u.repetition, base.p + u.ord
       FROM unnest($2::uuid[], $3::uuid[], $4::int[]) WITH ORDINALITY AS u(id, configuration_id, repetition, ord), base
       ON CONFLICT (configuration_id, repetition) DO NOTHING
       RETURNING id)
     INSERT INTO run_events (run_id, "to", detail) SELECT id, 'pending', $5 FROM r`,
    [campaignId, plainArrayLiteral(rows.map((r) => r.id)), plainArrayLiteral(rows.map((r) => r.configurationId)), plainArrayLiteral(rows.map((r) => r.repetition)), detail],
  );
  return rowCount ?? 0;
}

/** Stops the strategy: it adds no more runs, and the campaign finishes with its runs. */
export async function closeStrategy(tx: Pick<pg.PoolClient, 'query'>, campaignId: string, reason: string): Promise<void> {
  await tx.query('UPDATE campaigns SET strategy_open = false, strategy_stop = $2 WHERE id = $1', [campaignId, reason]);
}

/** Adaptive campaigns whose strategy is open and that have no run in flight: a step may be due (the tick's safety net). */
export async function listIdleAdaptiveCampaigns(db: Database, limit = 100): Promise<string[]> {
  const { rows } = await poolOf(db).query<{ id: string }>(
    `SELECT c.id FROM campaigns c WHERE c.strategy_open
       AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.campaign_id = c.id AND r.state NOT IN ${TERMINAL_SQL})
     ORDER BY c.created_at LIMIT $1`,
    [limit],
  );
  return rows.map((r) => r.id);
}

/** How many configurations a campaign has. */
export async function countConfigurations(db: Database, campaignId: string): Promise<number> {
  const { rows } = await poolOf(db).query<{ n: number }>('SELECT count(*)::int AS n FROM configurations WHERE campaign_id = $1', [campaignId]);
  return rows[0]!.n;
}
