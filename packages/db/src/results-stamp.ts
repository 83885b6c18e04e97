import { poolOf, type Database } from './client';

/**
 * Rows of a campaign's changes beyond which readResultsStamp folds them into one: a read then sums
 * a handful of rows, whatever the campaign's size (a 100,000-run campaign adds one per run
 * completing and per figures stored).
 */
export const RESULTS_CHANGES_FOLD_ABOVE = 256;

/**
 * A campaign's results stamp: a string that changes whenever anything its results are computed
 * from (packages/results readCampaignFigureInputs) changes, whoever writes it — a run completing,
 * a completed run's metrics, figures stored, recomputed or deleted, a node seen or its fingerprint
 * changed, the cluster renamed or re-probed. The API keeps computed results under it and computes
 * them again when it differs (apps/api/src/results-reader.ts). Null: no such campaign.
 *
 * It is the sum of the campaign's rows in campaign_results_changes (one per change, added by
 * triggers in the writer's transaction: migration 20261210060000_results_changes), and a hash of
 * its cluster's name and capabilities. The spec and the design are not in it: they are written
 * once, with the campaign. One statement, one snapshot; a campaign with more than
 * RESULTS_CHANGES_FOLD_ABOVE rows has them folded into one (the sum stays), so the next read is
 * one index lookup.
 */
export async function readResultsStamp(db: Database, campaignId: string): Promise<string | null> {
  const { rows } = await poolOf(db).query<{ changes: string; rows: number; cluster: string }>(
    `SELECT (SELECT coalesce(sum(ch.changes), 0)::text FROM campaign_results_changes ch WHERE ch.campaign_id = c.id) AS changes,
            (SELECT count(*)::int FROM campaign_results_changes ch WHERE ch.campaign_id = c.id) AS rows,
            md5(coalesce(cl.name, '') || '|' || coalesce(cl.capabilities::text, '')) AS cluster
     FROM campaigns c LEFT JOIN clusters cl ON cl.id = c.cluster_id
     WHERE c.id = $1`,
    [campaignId],
  );
  const row = rows[0];
  if (!row) return null;
  if (row.rows > RESULTS_CHANGES_FOLD_ABOVE) await foldResultsChanges(db, campaignId);
  return `${row.changes}|${row.cluster}`;
}

/**
 * Replaces a campaign's change rows with one holding their sum, in one statement: the sum every
 * reader sees stays what it was. Rows added meanwhile by transactions not yet committed are not
 * seen by the DELETE and stay; two folds at once each fold the rows they deleted.
 */
async function foldResultsChanges(db: Database, campaignId: string): Promise<void> {
  await poolOf(db).query(
    `WITH gone AS (DELETE FROM campaign_results_changes WHERE campaign_id = $1 RETURNING changes)
     INSERT INTO campaign_results_changes (campaign_id, changes) SELECT $1, sum(changes) FROM gone HAVING count(*) > 0`,
    [campaignId],
  );
}

/** One row of a campaign's changes (campaign_results_changes): its id, its run (null: a row folding others) and how many changes it counts. */
export interface ResultsChangeRow {
  id: string;
  runId: string | null;
  changes: bigint;
}

/**
 * A campaign's change rows, with how many configurations it has: what a reader that keeps the
 * campaign's inputs between reads (packages/results inputs-snapshot.ts) compares with what it saw,
 * to read again only the runs that changed. One statement, one snapshot; at most
 * RESULTS_CHANGES_FOLD_ABOVE rows and a few folded ones, since readResultsStamp folds beyond.
 */
export async function listResultsChanges(db: Database, campaignId: string): Promise<{ rows: ResultsChangeRow[]; configurations: number }> {
  const { rows } = await poolOf(db).query<{ id: string | null; run_id: string | null; changes: string | null; configurations: number }>(
    `SELECT ch.id::text AS id, ch.run_id, ch.changes::text AS changes,
            (SELECT count(*)::int FROM configurations c WHERE c.campaign_id = $1) AS configurations
     FROM (SELECT 1) one LEFT JOIN campaign_results_changes ch ON ch.campaign_id = $1`,
    [campaignId],
  );
  return {
    rows: rows.filter((r) => r.id !== null).map((r) => ({ id: r.id!, runId: r.run_id, changes: BigInt(r.changes!) })),
    configurations: rows[0]?.configurations ?? 0,
  };
}
