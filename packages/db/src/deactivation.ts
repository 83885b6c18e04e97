import { poolOf, type Database } from './client';
import { accessNoticeSql } from './access-notice';

/**
 * Retiring users, projects and clusters without deleting them: each has a `deactivated_at`, set by
 * deactivation and cleared by reactivation, so that campaigns, runs and the audit log keep naming
 * what they named. What a deactivated thing may no longer do is decided where it would do it:
 *
 * - user: authenticateToken refuses every token of theirs (tokens.ts); this statement tells every
 *   API process (accessNoticeSql), which closes the user's event streams at once.
 * - project: nothing new starts in it (the API answers ERG_DEACTIVATED), the scheduler claims none
 *   of its pending runs (runs.ts, claimLocked) and its suites are not triggered (@erg/suites).
 * - cluster: no campaign may name it, the scheduler claims none of its pending runs; jobs already
 *   in Slurm are followed to their end.
 *
 * Each function is idempotent (the first deactivation time stays) and returns the time it holds
 * now (null: active), or undefined when there is no such row.
 */

export type Deactivatable = 'user' | 'project' | 'cluster';

const TABLE: Record<Deactivatable, string> = { user: 'users', project: 'projects', cluster: 'clusters' };

/** Deactivates a user: their tokens stop working, and every API process closes their streams (accessNoticeSql). */
async function deactivateUser(db: Database, name: string): Promise<Date | null | undefined> {
  const rows = await poolOf(db).query<{ deactivated_at: Date }>(
    `WITH u AS (UPDATE users SET deactivated_at = coalesce(deactivated_at, now()) WHERE name = $1 RETURNING id, deactivated_at)
     SELECT u.deactivated_at, ${accessNoticeSql('userId', 'u.id')} FROM u`,
    [name],
  );
  return rows.rowCount === 0 ? undefined : rows.rows[0]!.deactivated_at;
}

/** Sets or clears `deactivated_at` of the user, project or cluster of that name (see the module comment). */
export async function setDeactivated(db: Database, kind: Deactivatable, name: string, deactivated: boolean): Promise<Date | null | undefined> {
  if (kind === 'user' && deactivated) return deactivateUser(db, name);
  const rows = await poolOf(db).query<{ deactivated_at: Date | null }>(
    `UPDATE ${TABLE[kind]} SET deactivated_at = ${deactivated ? 'coalesce(deactivated_at, now())' : 'NULL'} WHERE name = $1 RETURNING deactivated_at`,
    [name],
  );
  return rows.rowCount === 0 ? undefined : rows.rows[0]!.deactivated_at;
}

/** The deactivated one of a project and a cluster that new work would go to, or null when both are active. */
export async function findDeactivated(db: Database, home: { projectId: string; clusterId?: string | null }): Promise<{ kind: 'project' | 'cluster'; name: string } | null> {
  const rows = await poolOf(db).query<{ kind: 'project' | 'cluster'; name: string }>(
    `SELECT 'project' AS kind, name FROM projects WHERE id = $1 AND deactivated_at IS NOT NULL
     UNION ALL
     SELECT 'cluster', name FROM clusters WHERE id = $2::uuid AND deactivated_at IS NOT NULL`,
    [home.projectId, home.clusterId ?? null],
  );
  return rows.rows[0] ?? null;
}
