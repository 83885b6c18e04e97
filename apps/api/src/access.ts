import type { FastifyInstance, FastifyRequest } from 'fastify';
import { findDeactivated, findProjectByName, listProjects, locateResource, roleRank, DEFAULT_PROJECT, type Database, type Role, type TokenIdentity } from '@erg/db';
import { errors } from './errors';

/**
 * Who may do what. Every /v1 route declares one rule in its options (`config: { access }`):
 * the action, which names the least role it needs, and how to find the project the addressed
 * resource belongs to. One preParsing hook enforces the rules for all routes — before the body
 * is read, parsed or validated, so a caller without the role costs erg no more than a lookup —
 * and `onRoute` refuses
 * to register a /v1 route without one, so a new route cannot be forgotten (the permission-matrix
 * test is generated from the same rules).
 *
 * A resource of a project the caller has no role in answers 404, exactly as a resource that does
 * not exist: its existence is not revealed. A resource the caller can see but not change answers 403.
 * A resource of a deactivated project can be read, cancelled and its members managed, nothing else
 * (409 ERG_DEACTIVATED; routes that create pick their project themselves and call requireActive).
 */

/** The least role an action needs in the resource's project; `admin`: global admins only; `any`: any signed-in user. */
export const ACTIONS = {
  'cluster.read': 'viewer',
  'cluster.manage': 'maintainer',
  'campaign.read': 'viewer',
  'campaign.submit': 'researcher',
  // Researchers cancel their own campaigns; maintainers anyone's (see `ownerMay`).
  'campaign.cancel': 'maintainer',
  'run.finish': 'researcher',
  'telemetry.write': 'researcher',
  'suite.read': 'viewer',
  'suite.manage': 'maintainer',
  'suite.trigger': 'researcher',
  'audit.read': 'maintainer',
  'project.read': 'viewer',
  'member.manage': 'maintainer',
  'project.create': 'admin',
  // Deactivating and reactivating projects (users: user.manage; clusters: cluster.manage).
  'project.manage': 'admin',
  // Where a project's webhooks may go and which internal hosts its clusters may be open erg's own
  // network to what the project's maintainers write: not their call (the webhook and cluster policies).
  'network-policy.manage': 'admin',
  'user.manage': 'admin',
  self: 'any',
} as const satisfies Record<string, Role | 'admin' | 'any'>;
export type Action = keyof typeof ACTIONS;

/**
 * What a deactivated project still allows: reading its history, cancelling what is left of its
 * work, and taking access away (or giving it back). Everything else would start or change work in it.
 */
const ALLOWED_WHILE_DEACTIVATED: ReadonlySet<Action> = new Set<Action>([
  'cluster.read', 'campaign.read', 'campaign.cancel', 'suite.read', 'audit.read', 'project.read', 'member.manage',
]);

/** How a route finds the project of the resource it addresses. */
export type Target =
  | { kind: 'campaign' | 'run' | 'cluster' | 'suite' | 'project'; param: string }
  /** Lists: the handler shows only the projects `visibleProjects` returns. */
  | { kind: 'listing' }
  /**
   * Creation: the handler picks the project (the named cluster's, or `?project=`) and calls
   * `requireRole`. Before that, a caller without the role in any project is refused (403).
   */
  | { kind: 'create' }
  /** No project: the action alone decides (admin-only and self-service routes). */
  | { kind: 'none' };

export interface AccessRule {
  action: Action;
  target: Target;
  /** A caller below the action's role may still act on what they created (`ownerMay`: the least role for that). */
  ownerMay?: Role;
  /**
   * The route creates what it addresses when it does not exist (PUT of a suite): like a `create`
   * route, a caller without the role in any project is refused before the body is read.
   */
  upsert?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: AccessRule;
  }
  interface FastifyRequest {
    /** The signed-in caller (absent for public routes and run tokens). */
    identity?: TokenIdentity;
  }
}

export const access = {
  campaign: (action: Action, extra: Partial<AccessRule> = {}): { access: AccessRule } => ({ access: { action, target: { kind: 'campaign', param: 'id' }, ...extra } }),
  run: (action: Action, extra: Partial<AccessRule> = {}): { access: AccessRule } => ({ access: { action, target: { kind: 'run', param: 'id' }, ...extra } }),
  cluster: (action: Action): { access: AccessRule } => ({ access: { action, target: { kind: 'cluster', param: 'name' } } }),
  suite: (action: Action, extra: Partial<AccessRule> = {}): { access: AccessRule } => ({ access: { action, target: { kind: 'suite', param: 'name' }, ...extra } }),
  project: (action: Action): { access: AccessRule } => ({ access: { action, target: { kind: 'project', param: 'name' } } }),
  listing: (action: Action): { access: AccessRule } => ({ access: { action, target: { kind: 'listing' } } }),
  create: (action: Action): { access: AccessRule } => ({ access: { action, target: { kind: 'create' } } }),
  none: (action: Action): { access: AccessRule } => ({ access: { action, target: { kind: 'none' } } }),
};

function meets(have: Role | undefined, need: Role): boolean {
  return have !== undefined && roleRank(have) >= roleRank(need);
}

/** Whether the caller holds at least `need` in the project (admins hold everything). */
export function hasRole(identity: TokenIdentity, projectId: string, need: Role): boolean {
  return identity.isAdmin || meets(identity.roles.get(projectId), need);
}

/**
 * Whether the caller reads the detail of a cluster's failures (connection refused, timed out, host
 * key mismatch, address not allowed, …): the maintainers and admins of the cluster's project, who
 * can fix the cluster. Viewers and researchers read only that it cannot be reached (views.ts): the
 * detail tells open, closed and filtered ports apart, so it would make a cluster a port scanner.
 */
export function seesClusterFailures(identity: TokenIdentity, clusterProjectId: string): boolean {
  return hasRole(identity, clusterProjectId, 'maintainer');
}

/** Project ids where the caller holds at least `need`; null: every project (admin). */
export function visibleProjects(identity: TokenIdentity, need: Role = 'viewer'): string[] | null {
  if (identity.isAdmin) return null;
  return [...identity.roles].filter(([, role]) => meets(role, need)).map(([id]) => id);
}

export function isVisible(identity: TokenIdentity, projectId: string): boolean {
  return identity.isAdmin || identity.roles.has(projectId);
}

/**
 * For handlers that start work in a project (and on a cluster): 409 ERG_DEACTIVATED when either is
 * deactivated. Called after the role checks, so that it reveals nothing to those without the role.
 */
export async function requireActive(db: Database, home: { projectId: string; clusterId?: string | null }): Promise<void> {
  const deactivated = await findDeactivated(db, home);
  if (deactivated) throw errors.deactivated(deactivated.kind, deactivated.name);
}

/** For handlers that pick a project themselves (creation): 404 when invisible, 403 when the role is too low. */
export function requireRole(identity: TokenIdentity, projectId: string, need: Role, what: { kind: string; name: string }): void {
  if (!isVisible(identity, projectId)) throw errors.notFound(what.kind, what.name);
  if (!hasRole(identity, projectId, need)) throw errors.forbidden(`this needs the ${need} role in the project of ${what.kind} "${what.name}"`);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Checks the route's rule for the signed-in caller; see the module comment for the answers. */
export async function enforce(db: Database, req: FastifyRequest, rule: AccessRule): Promise<void> {
  const identity = req.identity;
  if (!identity) throw errors.unauthorized();
  const need = ACTIONS[rule.action];
  if (need === 'any') return;
  if (need === 'admin') {
    if (!identity.isAdmin) throw errors.forbidden('this needs an admin token');
    return;
  }
  const { target } = rule;
  // The project comes from the body, which is not read yet: a caller who holds the role in no
  // project at all cannot succeed anywhere, so they are refused before the body is validated.
  if ((target.kind === 'create' || rule.upsert) && !identity.isAdmin && (visibleProjects(identity, need) ?? []).length === 0) {
    throw errors.forbidden(`this needs the ${need} role in a project, and this token has it in none`);
  }
  if (target.kind === 'listing' || target.kind === 'create' || target.kind === 'none') return;
  const key = (req.params as Record<string, string | undefined>)[target.param];
  // A malformed id is the route's own 400; a resource that does not exist, its own 404.
  if (key === undefined || ((target.kind === 'campaign' || target.kind === 'run') && !UUID.test(key))) return;
  const found = await locateResource(db, target.kind, key);
  if (!found) return;
  if (!isVisible(identity, found.projectId)) throw errors.notFound(target.kind, key);
  // Owners are users, never token names: a campaign is a researcher's own whichever of their tokens created it.
  const own = rule.ownerMay && found.ownerUserId === identity.userId && hasRole(identity, found.projectId, rule.ownerMay);
  if (!hasRole(identity, found.projectId, need) && !own) {
    throw errors.forbidden(
      rule.ownerMay
        ? `this needs the ${need} role in this ${target.kind}'s project (or the ${rule.ownerMay} role and to have created it)`
        : `this needs the ${need} role in this ${target.kind}'s project`,
    );
  }
  if (found.deactivatedProject !== null && !ALLOWED_WHILE_DEACTIVATED.has(rule.action)) throw errors.deactivated('project', found.deactivatedProject);
}

/** Every registered /v1 route with its rule, for the permission-matrix test and the docs. */
export interface RouteRule {
  method: string;
  url: string;
  access: AccessRule;
}

/**
 * Installs the rules: refuses /v1 routes registered without one, and checks each request's rule
 * before its body is read (preParsing: params and the caller are known by then). A malformed id
 * in the path is left to the route's own validation (400). Returns the route table it collects.
 */
export function installAccessControl(app: FastifyInstance, db: Database): RouteRule[] {
  const table: RouteRule[] = [];
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/v1/')) return;
    const rule = route.config?.access;
    if (!rule) throw new Error(`route ${String(route.method)} ${route.url} has no access rule (config.access): every /v1 route must say who may call it`);
    for (const method of ([] as string[]).concat(route.method as string | string[])) {
      if (method !== 'HEAD') table.push({ method, url: route.url, access: rule });
    }
  });
  app.addHook('preParsing', async (req, _reply, payload) => {
    const rule = req.routeOptions.config?.access;
    if (rule && !req.runTokenFor) await enforce(db, req, rule);
    return payload;
  });
  return table;
}

/**
 * The project a new cluster, suite or import campaign goes to: the one named (`?project=`), else
 * the caller's only project where they hold `need`; admins default to the `default` project. A
 * deactivated one is refused (409): nothing new goes into it.
 */
export async function chooseProject(db: Database, identity: TokenIdentity, requested: string | undefined, need: Role): Promise<string> {
  if (requested !== undefined) {
    const project = await findProjectByName(db, requested);
    if (!project) throw errors.notFound('project', requested);
    requireRole(identity, project.id, need, { kind: 'project', name: requested });
    if (project.deactivatedAt) throw errors.deactivated('project', project.name);
    return project.id;
  }
  if (identity.isAdmin) {
    const fallback = await findProjectByName(db, DEFAULT_PROJECT);
    if (fallback?.deactivatedAt) throw errors.deactivated('project', fallback.name);
    if (fallback) return fallback.id;
  }
  const candidates = visibleProjects(identity, need) ?? [];
  if (candidates.length === 1) {
    await requireActive(db, { projectId: candidates[0]! });
    return candidates[0]!;
  }
  if (candidates.length === 0) throw errors.forbidden(`this needs the ${need} role in a project, and this token has it in none`);
  const names = (await listProjects(db, candidates)).map((p) => p.name);
  throw errors.validation('request querystring', [{ path: 'project', code: 'required', message: `name the project with ?project= (one of: ${names.sort().join(', ')})` }]);
}
