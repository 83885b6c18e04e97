import { ClusterPolicy, WebhookPolicy } from '@erg/spec';
import { poolOf, prismaOf, type Database } from './client';
import { accessNoticeSql } from './access-notice';
import type { Role } from './tokens';
import { ErgError } from '@erg/spec';

/** A project, with its webhook and cluster policies as stored (readWebhookPolicy, readClusterPolicy read them). */
export interface ProjectRecord {
  id: string;
  name: string;
  description: string | null;
  maxConcurrentRuns: number | null;
  webhookPolicy: unknown;
  clusterPolicy: unknown;
  createdAt: Date;
  /** Set while the project is deactivated (deactivation.ts). */
  deactivatedAt: Date | null;
}

export interface UserRecord {
  id: string;
  name: string;
  /** `person` or `service`. */
  kind: string;
  isAdmin: boolean;
  createdAt: Date;
  /** Set while the user is deactivated (deactivation.ts): their tokens are refused. */
  deactivatedAt: Date | null;
}

/** A user's role in a project, and since when they have it. */
export interface MembershipRecord {
  role: string;
  createdAt: Date;
}

const MEMBERSHIP_COLUMNS = { role: true, createdAt: true } as const;

/** The project everything created before projects existed belongs to (see its migration). */
export const DEFAULT_PROJECT = 'default';

export class NameTakenError extends ErgError<'ERG_NAME_TAKEN'> {
  constructor(kind: string, name: string) {
    super('ERG_NAME_TAKEN', `a ${kind} named "${name}" already exists`);
  }
}

async function unique<T>(kind: string, name: string, create: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (err) {
    if ((err as { code?: string }).code === 'P2002') throw new NameTakenError(kind, name);
    throw err;
  }
}

export function createProject(db: Database, input: { name: string; description?: string | null; maxConcurrentRuns?: number | null }): Promise<ProjectRecord> {
  return unique('project', input.name, () =>
    prismaOf(db).project.create({ data: { name: input.name, description: input.description ?? null, maxConcurrentRuns: input.maxConcurrentRuns ?? null } }),
  );
}

export function findProjectByName(db: Database, name: string): Promise<ProjectRecord | null> {
  return prismaOf(db).project.findUnique({ where: { name } });
}

/** Projects by id (every project when `ids` is null), by name. */
export function listProjects(db: Database, ids: string[] | null): Promise<ProjectRecord[]> {
  return prismaOf(db).project.findMany({ where: ids === null ? {} : { id: { in: ids } }, orderBy: { name: 'asc' } });
}

/**
 * A stored webhook policy as erg applies it: `{}` (the column's default) and anything that no
 * longer parses read as the strictest policy (https, public addresses only).
 */
export function readWebhookPolicy(stored: unknown): WebhookPolicy {
  const parsed = WebhookPolicy.safeParse(stored ?? {});
  return parsed.success ? parsed.data : WebhookPolicy.parse({});
}

/** The webhook policy of the project with this id (the strictest when there is no such project). */
export async function projectWebhookPolicy(db: Database, projectId: string): Promise<WebhookPolicy> {
  const row = await prismaOf(db).project.findUnique({ where: { id: projectId }, select: { webhookPolicy: true } });
  return readWebhookPolicy(row?.webhookPolicy);
}

/** Replaces a project's webhook policy (validated by the caller); null when there is no such project. */
export async function setProjectWebhookPolicy(db: Database, name: string, policy: WebhookPolicy): Promise<ProjectRecord | null> {
  const result = await prismaOf(db).project.updateManyAndReturn({ where: { name }, data: { webhookPolicy: policy } });
  return result[0] ?? null;
}

/**
 * A stored cluster policy as erg applies it: `{}` (the column's default) and anything that no
 * longer parses read as the strictest policy (public addresses only).
 */
export function readClusterPolicy(stored: unknown): ClusterPolicy {
  const parsed = ClusterPolicy.safeParse(stored ?? {});
  return parsed.success ? parsed.data : ClusterPolicy.parse({});
}

/** The name and cluster policy of the project with this id (null when there is no such project). */
export async function projectClusterPolicy(db: Database, projectId: string): Promise<{ project: string; policy: ClusterPolicy } | null> {
  const row = await prismaOf(db).project.findUnique({ where: { id: projectId }, select: { name: true, clusterPolicy: true } });
  return row ? { project: row.name, policy: readClusterPolicy(row.clusterPolicy) } : null;
}

/** Replaces a project's cluster policy (validated by the caller); null when there is no such project. */
export async function setProjectClusterPolicy(db: Database, name: string, policy: ClusterPolicy): Promise<ProjectRecord | null> {
  const result = await prismaOf(db).project.updateManyAndReturn({ where: { name }, data: { clusterPolicy: policy } });
  return result[0] ?? null;
}

export function createUser(db: Database, input: { name: string; kind?: 'person' | 'service'; isAdmin?: boolean }): Promise<UserRecord> {
  return unique('user', input.name, () => prismaOf(db).user.create({ data: { name: input.name, kind: input.kind ?? 'person', isAdmin: input.isAdmin ?? false } }));
}

export function findUserByName(db: Database, name: string): Promise<UserRecord | null> {
  return prismaOf(db).user.findUnique({ where: { name } });
}

/**
 * A user by name, but only one who has a role in one of `projectIds` (null: any user). What a
 * maintainer may look up: users outside their projects are not theirs to find, and are answered
 * like users that do not exist.
 */
export function findUserInProjects(db: Database, name: string, projectIds: string[] | null): Promise<UserRecord | null> {
  return prismaOf(db).user.findFirst({ where: { name, ...(projectIds === null ? {} : { memberships: { some: { projectId: { in: projectIds } } } }) } });
}

export function listUsers(db: Database): Promise<UserRecord[]> {
  return prismaOf(db).user.findMany({ orderBy: { name: 'asc' } });
}

/** Gives a user a role in a project, replacing the one they had. */
export function setMembership(db: Database, userId: string, projectId: string, role: Role): Promise<MembershipRecord> {
  return prismaOf(db).membership.upsert({
    where: { userId_projectId: { userId, projectId } }, create: { userId, projectId, role }, update: { role }, select: MEMBERSHIP_COLUMNS,
  });
}

/**
 * Takes a user's role in a project away; false when they had none. Every API process hears of it
 * in the same statement (accessNoticeSql), so the user's event streams stop carrying the project.
 */
export async function removeMembership(db: Database, userId: string, projectId: string): Promise<boolean> {
  const result = await poolOf(db).query(
    `WITH m AS (DELETE FROM memberships WHERE user_id = $1 AND project_id = $2 RETURNING user_id)
     SELECT ${accessNoticeSql('userId', 'm.user_id')} FROM m`,
    [userId, projectId],
  );
  return (result.rowCount ?? 0) > 0;
}

export function listMembers(db: Database, projectId: string): Promise<(MembershipRecord & { user: UserRecord })[]> {
  return prismaOf(db).membership.findMany({ where: { projectId }, select: { ...MEMBERSHIP_COLUMNS, user: true }, orderBy: { user: { name: 'asc' } } });
}

/** A user as the API names them. */
export interface UserSummary {
  id: string;
  name: string;
  kind: 'person' | 'service';
  isAdmin: boolean;
}

export async function findUserById(db: Database, id: string): Promise<UserSummary | null> {
  const user = await prismaOf(db).user.findUnique({ where: { id }, select: { id: true, name: true, kind: true, isAdmin: true } });
  return user ? { id: user.id, name: user.name, kind: user.kind as UserSummary['kind'], isAdmin: user.isAdmin } : null;
}

/** The kinds of resource a route addresses by id or name, whose project decides who may touch it. */
export type ResourceKind = 'campaign' | 'run' | 'cluster' | 'suite' | 'project';

/** The project a resource belongs to, and the user who created it (campaigns and runs only). */
export interface ResourceOwner {
  projectId: string;
  ownerUserId: string | null;
  /** The project's name when it is deactivated (what a refusal names); null while it is active. */
  deactivatedProject: string | null;
}

const LOCATE: Record<ResourceKind, string> = {
  campaign: 'SELECT project_id, created_by_user_id AS owner FROM campaigns WHERE id = $1::uuid',
  run: 'SELECT c.project_id, c.created_by_user_id AS owner FROM runs r JOIN campaigns c ON c.id = r.campaign_id WHERE r.id = $1::uuid',
  cluster: 'SELECT project_id, NULL AS owner FROM clusters WHERE name = $1',
  suite: 'SELECT project_id, NULL AS owner FROM suites WHERE name = $1',
  project: 'SELECT id AS project_id, NULL AS owner FROM projects WHERE name = $1',
};

/**
 * Whose a resource is: campaigns and runs by id (the caller checks it is a UUID), clusters, suites
 * and projects by name, with whether its project is deactivated. Null when there is no such resource.
 */
export async function locateResource(db: Database, kind: ResourceKind, key: string): Promise<ResourceOwner | null> {
  const rows = await poolOf(db).query<{ project_id: string; owner: string | null; deactivated_project: string | null }>(
    `SELECT r.project_id, r.owner, CASE WHEN p.deactivated_at IS NOT NULL THEN p.name END AS deactivated_project
     FROM (${LOCATE[kind]}) r JOIN projects p ON p.id = r.project_id`,
    [key],
  );
  const row = rows.rows[0];
  return row ? { projectId: row.project_id, ownerUserId: row.owner, deactivatedProject: row.deactivated_project } : null;
}
