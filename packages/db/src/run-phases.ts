import type { MarkKind } from '@erg/spec';
import { poolOf, type Database } from './client';
import type { ResultMember } from './counted-figures';
import type { RunMarkRecord } from './run-marks';

/** One completed run's stored member of its energy result (refreshRunEnergy's), with its configuration. */
interface RunResultMemberRow {
  run_id: string;
  key: string;
  member: unknown;
}

/**
 * One member of the stored results of a campaign's completed runs that have it (an object), in
 * the configurations' order and by repetition: only that member of each result is read, so
 * campaigns without it pay one index scan and nothing more. `member` is one of erg's own names.
 * Its twin in JavaScript, for erg verify, is counted-figures.ts's resultMemberOf.
 */
async function listCampaignRunResultMember(db: Database, campaignId: string, member: ResultMember, runIds?: readonly string[]): Promise<RunResultMemberRow[]> {
  const rows = await poolOf(db).query<RunResultMemberRow>(
    `SELECT r.id AS run_id, c.key, e.result->$2::text AS member
     FROM runs r JOIN configurations c ON c.id = r.configuration_id JOIN run_energy e ON e.run_id = r.id
     WHERE r.campaign_id = $1 AND r.state = 'completed' AND jsonb_typeof(e.result->$2::text) = 'object'${runIds ? ' AND r.id = ANY($3::uuid[])' : ''}
     ORDER BY c.position, r.repetition, r.id`,
    runIds ? [campaignId, member, runIds] : [campaignId, member],
  );
  return rows.rows;
}

/** One completed run's stored energy per phase (refreshRunEnergy's `phases`), with its configuration. */
export interface CampaignRunPhasesRow {
  runId: string;
  key: string;
  /** @erg/spec RunPhases as stored; the caller validates. */
  phases: unknown;
}

/** The phases of a campaign's completed runs that have them (their workload marked phases). */
export async function listCampaignRunPhases(db: Database, campaignId: string, runIds?: readonly string[]): Promise<CampaignRunPhasesRow[]> {
  return (await listCampaignRunResultMember(db, campaignId, 'phases', runIds)).map((r) => ({ runId: r.run_id, key: r.key, phases: r.member }));
}

/** How many marks a run has, which nodes wrote them and with what (sh, py, log). */
export async function runMarksSummary(db: Database, runId: string): Promise<{ count: number; nodes: string[]; writers: string[] }> {
  const { rows } = await poolOf(db).query<{ count: number; nodes: string[] | null; writers: string[] | null }>(
    `SELECT count(*)::int AS count, array_agg(DISTINCT node ORDER BY node) AS nodes, array_agg(DISTINCT writer ORDER BY writer) AS writers
     FROM run_marks WHERE run_id = $1`,
    [runId],
  );
  const r = rows[0]!;
  return { count: r.count, nodes: r.count === 0 ? [] : (r.nodes ?? []), writers: r.count === 0 ? [] : (r.writers ?? []) };
}

/**
 * A run's first `limit` marks in listRunMarks's order (node, time, offset): enough to draw its
 * phases, without reading a million marks into a request that shows a few thousand segments.
 */
export async function listRunMarksUpTo(db: Database, runId: string, limit: number): Promise<RunMarkRecord[]> {
  const { rows } = await poolOf(db).query<{ node: string; offset: string; kind: MarkKind; name: string; t: number; clock: 'mono' | 'wall'; writer: string }>(
    `SELECT node, "offset", kind, name, t, clock, writer FROM run_marks WHERE run_id = $1 ORDER BY node, t, "offset" LIMIT $2`,
    [runId, limit],
  );
  return rows.map((r) => ({ node: r.node, offset: Number(r.offset), kind: r.kind, name: r.name, t: r.t, clock: r.clock, writer: r.writer }));
}

/** One completed run's stored data movement (refreshRunEnergy's `dataMovement`), with its configuration. */
export interface CampaignRunDataMovementRow {
  runId: string;
  key: string;
  /** @erg/spec RunDataMovement as stored; the caller validates. */
  dataMovement: unknown;
}

/** The data movement of a campaign's completed runs that have it (a node had a data-movement sensor). */
export async function listCampaignRunDataMovement(db: Database, campaignId: string, runIds?: readonly string[]): Promise<CampaignRunDataMovementRow[]> {
  return (await listCampaignRunResultMember(db, campaignId, 'dataMovement', runIds)).map((r) => ({ runId: r.run_id, key: r.key, dataMovement: r.member }));
}
