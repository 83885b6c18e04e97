import { poolOf, type Database } from './client';

/**
 * A campaign's results stamp: a string that changes whenever anything its results are computed
 * from (packages/results readCampaignFigureInputs) changes, whoever writes it — a run completing,
 * a completed run's metrics, figures stored, recomputed or deleted, a node's fingerprint, the
 * cluster renamed or re-probed. The API keeps computed results under it and computes them again
 * when it differs (apps/api/src/results-reader.ts).
 *
 * Each part is the count and the sum of the row stamps (migration 20261210060000_results_stamps)
 * of one input: the campaign's runs, its completed runs' figures, its completed runs' nodes; then
 * a hash of its cluster's name and capabilities. The spec and the design are not in it: they are
 * written once, with the campaign. One statement, one snapshot; its cost grows with the campaign's
 * runs (three index scans over them), far below computing the results.
 */
export async function readResultsStamp(db: Database, campaignId: string): Promise<string | null> {
  const { rows } = await poolOf(db).query<{ stamp: string }>(
    `SELECT concat_ws('|',
       (SELECT count(*) || ':' || coalesce(sum(r.results_stamp), 0) FROM runs r WHERE r.campaign_id = c.id),
       (SELECT count(*) || ':' || coalesce(sum(e.results_stamp), 0) FROM runs r JOIN run_energy e ON e.run_id = r.id WHERE r.campaign_id = c.id AND r.state = 'completed'),
       (SELECT count(*) || ':' || coalesce(sum(n.results_stamp), 0) FROM runs r JOIN run_nodes n ON n.run_id = r.id WHERE r.campaign_id = c.id AND r.state = 'completed'),
       md5(coalesce(cl.name, '') || '|' || coalesce(cl.capabilities::text, ''))) AS stamp
     FROM campaigns c LEFT JOIN clusters cl ON cl.id = c.cluster_id
     WHERE c.id = $1`,
    [campaignId],
  );
  return rows[0]?.stamp ?? null;
}
