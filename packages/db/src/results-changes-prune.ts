import { poolOf, type Database } from './client';

/** How many campaigns, and from how many change rows on, one pass of foldGrownResultsChanges folds. */
export interface ResultsChangesFold {
  /** Campaigns with more change rows than this are folded. */
  above: number;
  /** At most this many campaigns a pass (those with the most rows first): one pass is one bounded statement. */
  campaigns: number;
}

/**
 * Folds the change rows of the campaigns that have grown the most (campaign_results_changes,
 * migration 20261210060000) into one row each, holding their sum: the scheduler's share of
 * keeping that table small. readResultsStamp folds a campaign's rows when it reads them, so the
 * rows of a campaign nobody reads again (its runs' figures recomputed after a late batch, nodes
 * re-fingerprinted) would otherwise grow for ever.
 *
 * The same fold as readResultsStamp's, for several campaigns in one statement and one snapshot:
 * the rows the DELETE sees are replaced by their sum (run_id, where rows have one, NULL: the
 * folded row stands for no single run), so the sum every reader sees never changes. Rows added
 * meanwhile by transactions not yet committed are not seen and stay; a reader folding the same
 * campaign at the same time folds only the rows it deleted. Returns the campaigns folded.
 */
export async function foldGrownResultsChanges(db: Database, fold: ResultsChangesFold): Promise<string[]> {
  const { rows } = await poolOf(db).query<{ campaign_id: string }>(
    `WITH grown AS (
       SELECT campaign_id FROM campaign_results_changes GROUP BY campaign_id HAVING count(*) > $1 ORDER BY count(*) DESC, campaign_id LIMIT $2
     ), gone AS (
       DELETE FROM campaign_results_changes ch USING grown g WHERE ch.campaign_id = g.campaign_id RETURNING ch.campaign_id, ch.changes
     )
     INSERT INTO campaign_results_changes (campaign_id, changes) SELECT campaign_id, sum(changes) FROM gone GROUP BY campaign_id
     RETURNING campaign_id`,
    [fold.above, fold.campaigns],
  );
  return rows.map((r) => r.campaign_id);
}
