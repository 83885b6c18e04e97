import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Role } from '@erg/db';
import {
  ErrorBody, IdParams, Me, MemberParams, MemberPut, MemberView, ProjectCreate, ProjectDetail, ProjectList, ProjectView, TokenCreate, TokenCreated,
  TokenList, TokenView, UserCreate, UserList, UserView,
} from '@erg/spec';
import type { AppDeps } from '../app';
import { access } from '../access';
import { projectView, tokenView, userView } from '../views';
import {
  createNewProject, createNewUser, listAllUsers, listTokensWithin, listVisibleProjects, mintToken, projectNames, projectWithMembers, putMember, removeMember, revokeTokenWithin,
  setProjectActive, setUserActive, tokenUser,
} from '../services/access';

/** A project or user addressed by name in the path (its own validation answers a malformed one: 400). */
const NameOnly = z.object({ name: z.string().min(1).max(63) });

/**
 * Users, projects, memberships and API tokens. Admins create users and projects; maintainers
 * manage their project's members; everyone manages their own tokens, and a token can only
 * create, see and revoke tokens within its own bounds (`scopeExcess`).
 */
export const accessRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.get('/me', { config: access.none('self'), schema: { tags: ['access'], description: 'Who this token is and what it may do.', response: { 200: Me } } }, async (req) => {
      const identity = req.identity!;
      const [user, names] = await Promise.all([tokenUser(deps.db, identity.userId), projectNames(deps.db)]);
      return {
        user: user.name, kind: user.kind as 'person' | 'service', isAdmin: identity.isAdmin, token: { id: identity.id, name: identity.name },
        projects: [...identity.roles].map(([id, role]) => ({ name: names.get(id) ?? id, role })).sort((a, b) => a.name.localeCompare(b.name)),
      };
    });

    app.get(
      '/projects',
      { config: access.listing('project.read'), schema: { tags: ['access'], description: 'The projects you have a role in (admins: all).', response: { 200: ProjectList } } },
      async (req) => ({ items: (await listVisibleProjects(deps.db, req.identity!)).map((p) => projectView(p, req.identity!)) }),
    );

    app.post(
      '/projects',
      { config: access.none('project.create'), schema: { tags: ['access'], body: ProjectCreate, response: { 201: ProjectView, 400: ErrorBody, 403: ErrorBody, 409: ErrorBody } } },
      async (req, reply) => reply.status(201).send(projectView(await createNewProject(deps.db, req.body), req.identity!)),
    );

    app.get(
      '/projects/:name',
      { config: access.project('project.read'), schema: { tags: ['access'], params: z.object({ name: z.string() }), response: { 200: ProjectDetail, 404: ErrorBody } } },
      async (req) => {
        const { project, members } = await projectWithMembers(deps.db, req.params.name);
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
        const { user, membership } = await putMember(deps.db, req.identity!, req.params.name, req.params.user, req.body.role);
        return { user: user.name, kind: user.kind as 'person' | 'service', role: membership.role as Role, since: membership.createdAt.toISOString() };
      },
    );

    app.delete(
      '/projects/:name/members/:user',
      { config: access.project('member.manage'), schema: { tags: ['access'], params: MemberParams, response: { 204: z.null(), 404: ErrorBody } } },
      async (req, reply) => {
        await removeMember(deps.db, req.params.name, req.params.user);
        return reply.status(204).send(null);
      },
    );

    app.post(
      '/projects/:name/deactivate',
      {
        config: access.project('project.manage'),
        schema: {
          tags: ['access'],
          description:
            'Admins only. Retires a project without deleting it: its campaigns, runs, results and audit rows stay readable, and its campaigns can be ' +
            'cancelled and its members managed, but nothing new starts in it (409 ERG_DEACTIVATED): no campaigns, clusters, suites or suite runs. ' +
            'Its pending runs are held (not submitted, not cancelled); runs already in Slurm run to their end. Idempotent.',
          params: NameOnly,
          response: { 200: ProjectView, 404: ErrorBody },
        },
      },
      async (req) => projectView(await setProjectActive(deps.db, req.params.name, false), req.identity!),
    );

    app.post(
      '/projects/:name/reactivate',
      {
        config: access.project('project.manage'),
        schema: { tags: ['access'], description: 'Admins only. Undoes deactivation: held runs are submitted again. Idempotent.', params: NameOnly, response: { 200: ProjectView, 404: ErrorBody } },
      },
      async (req) => projectView(await setProjectActive(deps.db, req.params.name, true), req.identity!),
    );

    app.get('/users', { config: access.none('user.manage'), schema: { tags: ['access'], response: { 200: UserList } } }, async () => ({
      items: (await listAllUsers(deps.db)).map(userView),
    }));

    app.post(
      '/users',
      { config: access.none('user.manage'), schema: { tags: ['access'], body: UserCreate, response: { 201: UserView, 400: ErrorBody, 403: ErrorBody, 409: ErrorBody } } },
      async (req, reply) => reply.status(201).send(userView(await createNewUser(deps.db, req.body))),
    );

    app.post(
      '/users/:name/deactivate',
      {
        config: access.none('user.manage'),
        schema: {
          tags: ['access'],
          description:
            'Admins only. Retires a user without deleting them: every token of theirs is refused from now on (401) and their event streams end at once ' +
            '(`event: closed`, reason user_deactivated); their campaigns, memberships and audit rows stay. Not yourself, nor the last active admin (409). Idempotent.',
          params: NameOnly,
          response: { 200: UserView, 404: ErrorBody, 409: ErrorBody },
        },
      },
      async (req) => userView(await setUserActive(deps.db, req.identity!, req.params.name, false)),
    );

    app.post(
      '/users/:name/reactivate',
      {
        config: access.none('user.manage'),
        schema: {
          tags: ['access'],
          description: 'Admins only. Undoes deactivation: the tokens they had (not revoked, not expired) work again, with the roles they have. Idempotent.',
          params: NameOnly,
          response: { 200: UserView, 404: ErrorBody },
        },
      },
      async (req) => userView(await setUserActive(deps.db, req.identity!, req.params.name, true)),
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
        const [tokens, names] = await Promise.all([listTokensWithin(deps.db, req.identity!, req.query.all === 'true'), projectNames(deps.db)]);
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
        const { row, userName, secret } = await mintToken(deps.db, req.identity!, req.body);
        return reply.status(201).send({ ...tokenView(row, userName, await projectNames(deps.db)), token: secret });
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
        const { revoked, userName } = await revokeTokenWithin(deps.db, req.identity!, req.params.id);
        return tokenView(revoked, userName, await projectNames(deps.db));
      },
    );
  };
