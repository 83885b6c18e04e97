import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  createApiToken, createProject, createUser, findProjectByName, findToken, findUserById, findUserByName, findUserInProjects, listMembers, listProjects, listTokens,
  listUsers, NameTakenError, removeMembership, revokeToken, scopeExcess, scopeOf, setMembership,
  type ApiTokenRecord, type ProjectRecord, type Role, type ScopeExcess, type TokenIdentity, type TokenScope, type UserRecord,
} from '@erg/db';
import {
  ErrorBody, IdParams, Me, MemberParams, MemberPut, MemberView, ProjectCreate, ProjectDetail, ProjectList, ProjectView, TokenCreate, TokenCreated,
  TokenList, TokenView, UserCreate, UserList, UserView, type SpecIssue,
} from '@erg/spec';
import type { AppDeps } from '../app';
import { access, visibleProjects } from '../access';
import { errors } from '../errors';

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

function projectView(p: ProjectRecord, identity: TokenIdentity) {
  return {
    id: p.id, name: p.name, description: p.description, maxConcurrentRuns: p.maxConcurrentRuns,
    role: identity.isAdmin ? ('admin' as const) : (identity.roles.get(p.id) ?? null), createdAt: p.createdAt.toISOString(),
  };
}

function userView(u: UserRecord) {
  return { id: u.id, name: u.name, kind: u.kind as 'person' | 'service', isAdmin: u.isAdmin, createdAt: u.createdAt.toISOString(), disabledAt: iso(u.disabledAt) };
}

function tokenView(t: ApiTokenRecord, userName: string, projectNames: Map<string, string>) {
  return {
    id: t.id, name: t.name, prefix: t.prefix, user: userName, expiresAt: iso(t.expiresAt),
    projects: t.projectIds.map((id) => projectNames.get(id) ?? id), role: (t.maxRole as Role | null) ?? null,
    createdAt: t.createdAt.toISOString(), lastUsedAt: iso(t.lastUsedAt), revokedAt: iso(t.revokedAt),
  };
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
 * Users, projects, memberships and API tokens. Admins create users and projects; maintainers
 * manage their project's members; everyone manages their own tokens, and a token can only
 * create, see and revoke tokens within its own bounds (`scopeExcess`).
 */
export const accessRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const projectNames = async () => new Map((await listProjects(deps.db, null)).map((p) => [p.id, p.name]));
    /** The user of a token that was just authenticated or read, so it exists. */
    const userOf = async (id: string) => {
      const user = await findUserById(deps.db, id);
      if (!user) throw new Error(`user ${id} not found`);
      return user;
    };

    app.get('/me', { config: access.none('self'), schema: { tags: ['access'], description: 'Who this token is and what it may do.', response: { 200: Me } } }, async (req) => {
      const identity = req.identity!;
      const user = await userOf(identity.userId);
      const names = await projectNames();
      return {
        user: user.name, kind: user.kind as 'person' | 'service', isAdmin: identity.isAdmin, token: { id: identity.id, name: identity.name },
        projects: [...identity.roles].map(([id, role]) => ({ name: names.get(id) ?? id, role })).sort((a, b) => a.name.localeCompare(b.name)),
      };
    });

    app.get(
      '/projects',
      { config: access.listing('project.read'), schema: { tags: ['access'], description: 'The projects you have a role in (admins: all).', response: { 200: ProjectList } } },
      async (req) => ({ items: (await listProjects(deps.db, visibleProjects(req.identity!))).map((p) => projectView(p, req.identity!)) }),
    );

    app.post(
      '/projects',
      { config: access.none('project.create'), schema: { tags: ['access'], body: ProjectCreate, response: { 201: ProjectView, 400: ErrorBody, 403: ErrorBody, 409: ErrorBody } } },
      async (req, reply) => {
        try {
          return reply.status(201).send(projectView(await createProject(deps.db, req.body), req.identity!));
        } catch (err) {
          if (err instanceof NameTakenError) throw errors.conflict(err.message);
          throw err;
        }
      },
    );

    app.get(
      '/projects/:name',
      { config: access.project('project.read'), schema: { tags: ['access'], params: z.object({ name: z.string() }), response: { 200: ProjectDetail, 404: ErrorBody } } },
      async (req) => {
        const project = await findProjectByName(deps.db, req.params.name);
        if (!project) throw errors.notFound('project', req.params.name);
        const members = await listMembers(deps.db, project.id);
        return {
          ...projectView(project, req.identity!),
          members: members.map((m) => ({ user: m.user.name, kind: m.user.kind as 'person' | 'service', role: m.role as Role, since: m.createdAt.toISOString() })),
        };
      },
    );

    app.put(
      '/projects/:name/members/:user',
      {
        config: access.project('member.manage'),
        schema: { tags: ['access'], description: "Gives a user a role in the project (replacing the one they had).", params: MemberParams, body: MemberPut, response: { 200: MemberView, 404: ErrorBody } },
      },
      async (req) => {
        // Only users who share a project with the caller can be found (admins: anyone): a maintainer
        // cannot probe for users elsewhere. An admin brings a new user into their first project.
        const [project, user] = await Promise.all([
          findProjectByName(deps.db, req.params.name),
          findUserInProjects(deps.db, req.params.user, visibleProjects(req.identity!)),
        ]);
        if (!project) throw errors.notFound('project', req.params.name);
        if (!user) throw errors.notFound('user', req.params.user);
        const m = await setMembership(deps.db, user.id, project.id, req.body.role);
        return { user: user.name, kind: user.kind as 'person' | 'service', role: m.role as Role, since: m.createdAt.toISOString() };
      },
    );

    app.delete(
      '/projects/:name/members/:user',
      { config: access.project('member.manage'), schema: { tags: ['access'], params: MemberParams, response: { 204: z.null(), 404: ErrorBody } } },
      async (req, reply) => {
        const [project, user] = await Promise.all([findProjectByName(deps.db, req.params.name), findUserByName(deps.db, req.params.user)]);
        if (!project) throw errors.notFound('project', req.params.name);
        if (!user || !(await removeMembership(deps.db, user.id, project.id))) throw errors.notFound('member', req.params.user);
        return reply.status(204).send(null);
      },
    );

    app.get('/users', { config: access.none('user.manage'), schema: { tags: ['access'], response: { 200: UserList } } }, async () => ({
      items: (await listUsers(deps.db)).map(userView),
    }));

    app.post(
      '/users',
      { config: access.none('user.manage'), schema: { tags: ['access'], body: UserCreate, response: { 201: UserView, 400: ErrorBody, 403: ErrorBody, 409: ErrorBody } } },
      async (req, reply) => {
        try {
          return reply.status(201).send(userView(await createUser(deps.db, req.body)));
        } catch (err) {
          if (err instanceof NameTakenError) throw errors.conflict(err.message);
          throw err;
        }
      },
    );

    app.get(
      '/tokens',
      {
        config: access.none('self'),
        schema: {
          tags: ['access'],
          description:
            'Your tokens (never their secrets) that lie within the calling token\'s bounds: a narrowed token sees only tokens it could have ' +
            'created; your full token sees all of yours. Admins see everyone\'s with ?all=true.',
          querystring: z.object({ all: z.enum(['true', 'false']).default('false') }),
          response: { 200: TokenList },
        },
      },
      async (req) => {
        const identity = req.identity!;
        const all = req.query.all === 'true' && identity.isAdmin;
        const [tokens, names] = await Promise.all([
          all ? listTokens(deps.db) : listTokens(deps.db, identity.userId, identity.isAdmin ? undefined : identity.scope),
          projectNames(),
        ]);
        return { items: tokens.map((t) => tokenView(t, t.user.name, names)) };
      },
    );

    app.post(
      '/tokens',
      {
        config: access.none('self'),
        schema: {
          tags: ['access'],
          description:
            'Creates an API token, shown once. It lies within the calling token\'s bounds: it expires no later (and a token with an expiry ' +
            'cannot create one without), reaches only its projects, and has no higher role; what the body leaves out is inherited from the ' +
            'calling token. An admin\'s full token may create any token, also for other users (service accounts for CI).',
          body: TokenCreate,
          response: { 201: TokenCreated, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        },
      },
      async (req, reply) => {
        const identity = req.identity!;
        const body = req.body;
        let userId = identity.userId;
        let userName = identity.userName;
        if (body.user !== undefined && body.user !== identity.userName) {
          if (!identity.isAdmin) throw errors.forbidden('only admins create tokens for other users');
          const user = await findUserByName(deps.db, body.user);
          if (!user) throw errors.notFound('user', body.user);
          userId = user.id;
          userName = user.name;
        }
        // Named projects must be visible to the calling token: one outside it answers like one that does not exist.
        const projectIds: string[] = [];
        for (const name of body.projects ?? []) {
          const p = await findProjectByName(deps.db, name);
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
        const created = await createApiToken(deps.db, body.name, { userId, ...child });
        const row = (await findToken(deps.db, created.id))!;
        return reply.status(201).send({ ...tokenView(row, userName, await projectNames()), token: created.token });
      },
    );

    app.delete(
      '/tokens/:id',
      {
        config: access.none('self'),
        schema: {
          tags: ['access'],
          description:
            'Revokes a token: one of yours within the calling token\'s bounds (your full token: any of yours; admins: anyone\'s). ' +
            'It stops working at once. A token outside those bounds answers 404, like one that does not exist.',
          params: IdParams,
          response: { 200: TokenView, 404: ErrorBody },
        },
      },
      async (req) => {
        const identity = req.identity!;
        const token = await findToken(deps.db, req.params.id);
        const mayRevoke =
          token !== null && (identity.isAdmin || (token.userId === identity.userId && scopeExcess(identity.scope, scopeOf(token)).length === 0));
        if (!mayRevoke) throw errors.notFound('token', req.params.id);
        const revoked = await revokeToken(deps.db, token.id);
        const user = await userOf(revoked.userId);
        return tokenView(revoked, user.name, await projectNames());
      },
    );
  };
