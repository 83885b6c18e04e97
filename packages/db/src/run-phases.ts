import { poolOf, type Database } from './client';

/** One completed run's stored energy per phase (refreshRunEnergy's `phases`), with its configuration. */
export interface CampaignRunPhasesRow {
  runId: string;
  key: string;
  /** @erg/spec RunPhases as stored; the caller validates. */
  phases: unknown;
}

/**
 * The phases of a campaign's completed runs that have them (their workload marked phases), in the
 * configurations' order and by repetition: only that member of each stored result is read, so
 * campaigns without marks pay one index scan and nothing more.
 */
export async function listCampaignRunPhases(db: Database, campaignId: string): Promise<CampaignRunPhasesRow[]> {
  const rows = await poolOf(db).query<{ run_id: string; key: string; phases: unknown }>(
    `SELECT r.id AS run_id, c.key, e.result->'phases' AS phases
     FROM runs r JOIN configurations c ON c.id = r.configuration_id JOIN run_energy e ON e.run_id = r.id
     WHERE r.campaign_id = $1 AND r.state = 'completed' AND jsonb_typeof(e.result->'phases') = 'object'
     ORDER BY c.position, r.repetition`,
    [campaignId],
  );
  return rows.rows.map((r) => ({ runId: r.run_id, key: r.key, phases: r.phases }));
}
