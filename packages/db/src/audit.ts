import { poolOf, type Database } from './client';

/**
 * The audit log: one row per mutating API request, written after the response. Append-only; the
 * API decides what is audited (apps/api/src/audit.ts), this module only stores and pages.
 */

/** Resource types whose project can be looked up from their id or name. */
const PROJECT_OF: Record<string, string> = {
  campaign: `SELECT project_id FROM campaigns WHERE id::text = $1`,
  run: `SELECT c.project_id FROM runs r JOIN campaigns c ON c.id = r.campaign_id WHERE r.id::text = $1`,
  cluster: `SELECT project_id FROM clusters WHERE name = $1`,
  suite: `SELECT project_id FROM suites WHERE name = $1`,
  project: `SELECT id AS project_id FROM projects WHERE name = $1`,
};

/** The project a resource belongs to, or null (unknown type, or no such resource). */
export async function projectOfResource(db: Database, resourceType: string | null, resourceId: string | null): Promise<string | null> {
  const sql = resourceType ? PROJECT_OF[resourceType] : undefined;
  if (!sql || !resourceId) return null;
  const rows = await poolOf(db).query<{ project_id: string | null }>(sql, [resourceId]);
  return rows.rows[0]?.project_id ?? null;
}

export interface AuditEntry {
  actorTokenId: string | null;
  actorName: string | null;
  action: string;
  resourceType: string | null;
  resourceId: string | null;
  /** Known before the request (a deleted resource); otherwise looked up from the resource. */
  projectId: string | null;
  statusCode: number;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
}

export async function recordAudit(db: Database, e: AuditEntry): Promise<void> {
  const lookup = e.resourceType ? PROJECT_OF[e.resourceType] : undefined;
  // The project is resolved in the same statement: no extra round trip per request.
  const project = e.projectId !== null || !lookup || !e.resourceId ? '$6::uuid' : `COALESCE($6::uuid, (${lookup.replace('$1', '$5')}))`;
  await poolOf(db).query(
    `INSERT INTO audit_log (actor_token_id, actor_name, action, resource_type, resource_id, project_id, status_code, ip, user_agent, request_id)
     VALUES ($1, $2, $3, $4, $5, ${project}, $7, $8, $9, $10)`,
    [e.actorTokenId, e.actorName, e.action, e.resourceType, e.resourceId, e.projectId, e.statusCode, e.ip, e.userAgent, e.requestId],
  );
}

export interface AuditRow extends Omit<AuditEntry, 'projectId'> {
  id: bigint;
  at: Date;
  projectId: string | null;
}

export interface AuditFilter {
  since?: Date | undefined;
  until?: Date | undefined;
  /** A token id, or a token name. */
  actor?: string | undefined;
  action?: string | undefined;
  resourceType?: string | undefined;
  resourceId?: string | undefined;
  /** Only these projects' rows (rows without a project are left out); undefined: every row. */
  projectIds?: string[] | undefined;
  limit: number;
  /** Rows older than this id (the last id of the previous page). */
  before?: bigint | undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Newest first (by id, which follows insertion order); `next` is the last id when more rows exist. */
export async function listAudit(db: Database, f: AuditFilter): Promise<{ items: AuditRow[]; next: bigint | null }> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (f.since) add('at >= ?', f.since);
  if (f.until) add('at < ?', f.until);
  if (f.actor) {
    if (UUID.test(f.actor)) add('actor_token_id = ?::uuid', f.actor);
    else add('actor_name = ?', f.actor);
  }
  if (f.action) add('action = ?', f.action);
  if (f.resourceType) add('resource_type = ?', f.resourceType);
  if (f.resourceId) add('resource_id = ?', f.resourceId);
  if (f.projectIds) add('project_id = ANY(?::uuid[])', f.projectIds);
  if (f.before !== undefined) add('id < ?', f.before.toString());
  params.push(f.limit + 1);
  const rows = await poolOf(db).query<{
    id: string; at: Date; actor_token_id: string | null; actor_name: string | null; action: string; resource_type: string | null;
    resource_id: string | null; project_id: string | null; status_code: number; ip: string | null; user_agent: string | null; request_id: string | null;
  }>(
    `SELECT * FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
  const items = rows.rows.slice(0, f.limit).map((r) => ({
    id: BigInt(r.id), at: r.at, actorTokenId: r.actor_token_id, actorName: r.actor_name, action: r.action, resourceType: r.resource_type,
    resourceId: r.resource_id, projectId: r.project_id, statusCode: r.status_code, ip: r.ip, userAgent: r.user_agent, requestId: r.request_id,
  }));
  return { items, next: rows.rows.length > f.limit ? items[items.length - 1]!.id : null };
}
