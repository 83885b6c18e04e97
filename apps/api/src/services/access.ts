import type { z } from 'zod';
import {
  createApiToken, createProject, createUser, findProjectByName, findToken, findUserById, findUserByName, findUserInProjects, listMembers, listProjects, listTokens, listUsers,
  NameTakenError, removeMembership, revokeToken, setDeactivated, scopeExcess, scopeOf, setMembership,
  type ApiTokenRecord, type Database, type MembershipRecord, type ProjectRecord, type Role, type ScopeExcess, type TokenIdentity, type TokenScope, type UserRecord,
} from '@erg/db';
import type { ProjectCreate, SpecIssue, TokenCreate, UserCreate } from '@erg/spec';
import { visibleProjects } from '../access';
import { errors } from '../errors';

/**
 * Access: users, projects, memberships and API tokens. Admins create users and projects;
 * maintainers manage their project's members; everyone manages their own tokens, and a token can
 * only create, see and revoke tokens within its own bounds (`scopeExcess`). Which role a route
 * needs is its access rule's (access.ts); what is checked here is what depends on the body or on
 * the token addressed. The routes (routes/access.ts) read the request and write the answer.
 */

/** Every project's name by id, for naming a token's projects. */
export async function projectNames(db: Database): Promise<Map<string, string>> {
  return new Map((await listProjects(db, null)).map((p) => [p.id, p.name]));
}

/** The user of a token that was just authenticated or read, so it exists. */
export async function tokenUser(db: Database, userId: string): Promise<NonNullable<Awaited<ReturnType<typeof findUserById>>>> {
  const user = await findUserById(db, userId);
  if (!user) throw new Error(`user ${userId} not found`);
  return user;
}

/** The projects the caller has a role in (admins: all). */
export async function listVisibleProjects(db: Database, identity: TokenIdentity): Promise<ProjectRecord[]> {
  return listProjects(db, visibleProjects(identity));
}

/** A new project; a name taken is a conflict (409). */
export async function createNewProject(db: Database, body: z.output<typeof ProjectCreate>): Promise<ProjectRecord> {
  return conflictOnNameTaken(() => createProject(db, body));
}

/** Every user (admins only: the route's access rule). */
export async function listAllUsers(db: Database): Promise<UserRecord[]> {
  return listUsers(db);
}

/** A new user; a name taken is a conflict (409). */
export async function createNewUser(db: Database, body: z.output<typeof UserCreate>): Promise<UserRecord> {
  return conflictOnNameTaken(() => createUser(db, body));
}

async function conflictOnNameTaken<T>(create: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (err) {
    if (err instanceof NameTakenError) throw errors.conflict(err.message);
    throw err;
  }
}

/**
 * Deactivates the user (their tokens are refused from now on, their event streams close at once:
 * setDeactivated tells every API process) or reactivates them. Memberships and tokens are kept, so
 * that reactivation gives back what they had. Nobody deactivates themselves (409): the caller is an
 * active admin, so erg always keeps one who can undo a deactivation.
 */
export async function setUserActive(db: Database, identity: TokenIdentity, name: string, active: boolean): Promise<UserRecord> {
  if (!active && name === identity.userName) throw errors.conflict('you cannot deactivate yourself: ask another admin');
  if ((await setDeactivated(db, 'user', name, !active)) === undefined) throw errors.notFound('user', name);
  return (await findUserByName(db, name))!;
}

/**
 * Deactivates the project (read-only from now on: nothing new starts in it, its pending runs are
 * held, its suites' schedules skip) or reactivates it. Its members keep their roles. Idempotent.
 */
export async function setProjectActive(db: Database, name: string, active: boolean): Promise<ProjectRecord> {
  if ((await setDeactivated(db, 'project', name, !active)) === undefined) throw errors.notFound('project', name);
  return (await findProjectByName(db, name))!;
}

/** The project of that name and its members. */
export async function projectWithMembers(db: Database, name: string): Promise<{ project: ProjectRecord; members: (MembershipRecord & { user: UserRecord })[] }> {
  const project = await findProjectByName(db, name);
  if (!project) throw errors.notFound('project', name);
  return { project, members: await listMembers(db, project.id) };
}

/**
 * Gives a user a role in the project (replacing the one they had). Only users who share a project
 * with the caller can be found (admins: anyone): a maintainer cannot probe for users elsewhere. An
 * admin brings a new user into their first project.
 */
export async function putMember(db: Database, identity: TokenIdentity, projectName: string, userName: string, role: Role): Promise<{ user: UserRecord; membership: MembershipRecord }> {
  const [project, user] = await Promise.all([findProjectByName(db, projectName), findUserInProjects(db, userName, visibleProjects(identity))]);
  if (!project) throw errors.notFound('project', projectName);
  if (!user) throw errors.notFound('user', userName);
  return { user, membership: await setMembership(db, user.id, project.id, role) };
}

/** Takes a user's role in the project away; a user who has none there is not a member (404). */
export async function removeMember(db: Database, projectName: string, userName: string): Promise<void> {
  const [project, user] = await Promise.all([findProjectByName(db, projectName), findUserByName(db, userName)]);
  if (!project) throw errors.notFound('project', projectName);
  if (!user || !(await removeMembership(db, user.id, project.id))) throw errors.notFound('member', userName);
}

/**
 * The caller's tokens that lie within the calling token's bounds (a narrowed token sees only
 * tokens it could have created); with `all`, an admin sees everyone's.
 */
export async function listTokensWithin(db: Database, identity: TokenIdentity, all: boolean): Promise<(ApiTokenRecord & { user: { name: string } })[]> {
  if (all && identity.isAdmin) return listTokens(db);
  return listTokens(db, identity.userId, identity.isAdmin ? undefined : identity.scope);
}

/** The refusal of one bound a new token would exceed, in the body's own terms. */
function widerIssue(excess: ScopeExcess, parent: TokenScope): SpecIssue {
  const refusals: Record<ScopeExcess['bound'], { path: string; message: string }> = {
    expiresAt: {
      path: 'expiresInDays',
      message: `this token expires at ${parent.expiresAt?.toISOString()}; a token it creates cannot outlive it (ask for fewer days, or leave expiresInDays out to expire with it)`,
    },
    projects: { path: 'projects', message: 'this token is limited to some projects; a token it creates must name only those (or leave projects out to inherit them)' },
    role: { path: 'role', message: `this token is limited to the ${parent.maxRole} role; a token it creates cannot have a higher one` },
  };
  return { ...refusals[excess.bound], code: 'exceeds_parent' };
}

/**
 * Creates an API token within the calling token's bounds: it expires no later, reaches only its
 * projects and has no higher role; what the body leaves out is inherited. Only admins create tokens
 * for other users. Returns the stored row and the secret, shown once.
 */
export async function mintToken(db: Database, identity: TokenIdentity, body: z.output<typeof TokenCreate>): Promise<{ row: ApiTokenRecord; userName: string; secret: string }> {
  let userId = identity.userId;
  let userName = identity.userName;
  if (body.user !== undefined && body.user !== identity.userName) {
    if (!identity.isAdmin) throw errors.forbidden('only admins create tokens for other users');
    const user = await findUserByName(db, body.user);
    if (!user) throw errors.notFound('user', body.user);
    userId = user.id;
    userName = user.name;
  }
  // Named projects must be visible to the calling token: one outside it answers like one that does not exist.
  const projectIds: string[] = [];
  for (const name of body.projects ?? []) {
    const p = await findProjectByName(db, name);
    if (!p || !(identity.isAdmin || identity.roles.has(p.id))) throw errors.notFound('project', name);
    projectIds.push(p.id);
  }
  // What the body leaves out comes from the calling token (an admin's full token has no bounds to pass on).
  const parent = identity.scope;
  const child: TokenScope = {
    expiresAt: body.expiresInDays !== undefined ? new Date(Date.now() + body.expiresInDays * 86_400_000) : parent.expiresAt,
    projectIds: body.projects !== undefined ? projectIds : parent.projectIds,
    maxRole: body.role ?? parent.maxRole,
  };
  // An admin's full token mints anything; an admin token with an expiry is still bound by it (a
  // leaked short-lived token must not mint a lasting one).
  if (!(identity.isAdmin && parent.expiresAt === null)) {
    const excess = scopeExcess(parent, child);
    if (excess.length > 0) throw errors.tokenWider(excess.map((e) => widerIssue(e, parent)));
  }
  const created = await createApiToken(db, body.name, { userId, ...child });
  return { row: (await findToken(db, created.id))!, userName, secret: created.token };
}

/**
 * Revokes a token: one of the caller's within the calling token's bounds (their full token: any of
 * theirs; admins: anyone's). One outside those bounds answers 404, like one that does not exist.
 */
export async function revokeTokenWithin(db: Database, identity: TokenIdentity, id: string): Promise<{ revoked: ApiTokenRecord; userName: string }> {
  const token = await findToken(db, id);
  const mayRevoke = token !== null && (identity.isAdmin || (token.userId === identity.userId && scopeExcess(identity.scope, scopeOf(token)).length === 0));
  if (!mayRevoke) throw errors.notFound('token', id);
  const revoked = await revokeToken(db, token.id);
  return { revoked, userName: (await tokenUser(db, revoked.userId)).name };
}
