import { z } from 'zod';

/**
 * Users, projects, roles and API tokens: the bodies of /v1/me, /v1/projects, /v1/users and
 * /v1/tokens (issue 6). A project owns clusters, campaigns and suites; a user has one role per
 * project: viewer (read) < researcher (submit, cancel own) < maintainer (clusters, suites,
 * members); admins may do everything.
 */

export const RoleName = z.enum(['viewer', 'researcher', 'maintainer']).meta({ id: 'Role' });

const NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/**
 * Prefixes of the names erg writes itself where a person's name would stand: `suite:<name>` is the
 * owner of a campaign a suite started. A token (or user) named like that would pass for erg, so
 * such names are refused. User names cannot contain `:` at all (UserName); token names are free
 * text and are checked against these, case and surrounding blanks ignored.
 */
export const RESERVED_NAME_PREFIXES = ['suite:', 'erg:'] as const;

/** The owner erg shows for a campaign a suite started. */
export function suiteOwner(suiteName: string): string {
  return `suite:${suiteName}`;
}

/** The reserved prefix a free-text name starts with, or null. */
export function reservedPrefixOf(name: string): string | null {
  const n = name.trim().toLowerCase();
  return RESERVED_NAME_PREFIXES.find((p) => n.startsWith(p)) ?? null;
}
export const ProjectName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, { error: 'use 1-63 lower-case letters, digits and -, starting with a letter or digit' });
export const UserName = z.string().regex(NAME, { error: 'use 1-63 lower-case letters, digits, ., _ and -, starting with a letter or digit' });

export const ProjectCreate = z
  .object({
    name: ProjectName,
    description: z.string().max(2000).optional(),
    maxConcurrentRuns: z.int().min(1).max(1_000_000).nullable().default(null).describe('most runs submitted, queued or running at once across the project'),
  })
  .strict()
  .meta({ id: 'ProjectCreate' });

export const ProjectView = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    maxConcurrentRuns: z.number().nullable(),
    role: z.enum(['viewer', 'researcher', 'maintainer', 'admin']).nullable().describe("the caller's role in it"),
    createdAt: z.string(),
    deactivatedAt: z.string().nullable().describe('set while the project is deactivated: its history stays readable, nothing new starts in it'),
  })
  .meta({ id: 'Project' });

export const MemberView = z.object({ user: z.string(), kind: z.enum(['person', 'service']), role: RoleName, since: z.string() }).meta({ id: 'Member' });

export const ProjectDetail = ProjectView.extend({ members: z.array(MemberView) }).meta({ id: 'ProjectDetail' });

export const MemberPut = z.object({ role: RoleName }).strict();

export const MemberParams = z.object({ name: ProjectName, user: UserName });

export const UserCreate = z
  .object({
    name: UserName,
    kind: z.enum(['person', 'service']).default('person').describe('service: an account for a CI pipeline'),
    isAdmin: z.boolean().default(false),
  })
  .strict()
  .meta({ id: 'UserCreate' });

export const UserView = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: z.enum(['person', 'service']),
    isAdmin: z.boolean(),
    createdAt: z.string(),
    deactivatedAt: z.string().nullable().describe('set while the user is deactivated: their tokens are refused (401) and their event streams closed'),
  })
  .meta({ id: 'User' });

export const TokenCreate = z
  .object({
    name: z
      .string()
      .min(1)
      .max(100)
      .refine((n) => reservedPrefixOf(n) === null, {
        error: `names starting with ${RESERVED_NAME_PREFIXES.join(' or ')} are erg's own (a suite's campaigns are owned by suite:<name>): name the token for what it is for`,
      })
      .describe(`what the token is for, e.g. "laptop" or "gitlab nightly"; not starting with ${RESERVED_NAME_PREFIXES.map((p) => `\`${p}\``).join(' or ')}`),
    user: UserName.optional().describe('admins only: create the token for this user (e.g. a service account)'),
    expiresInDays: z.number().gt(0).max(3650).optional().describe('default: never expires'),
    projects: z.array(ProjectName).max(100).optional().describe('narrow the token to these projects (default: all of the user\'s)'),
    role: RoleName.optional().describe('narrow the token to at most this role (it is then never admin)'),
  })
  .strict()
  .meta({ id: 'TokenCreate' });

export const TokenView = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().describe('the first characters of the token, to recognise it'),
    user: z.string(),
    expiresAt: z.string().nullable(),
    projects: z.array(z.string()).describe('empty: every project of the user'),
    role: RoleName.nullable().describe("null: the user's own roles"),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
  })
  .meta({ id: 'Token' });

export const TokenCreated = TokenView.extend({ token: z.string().describe('shown once; only its hash is stored') }).meta({ id: 'TokenCreated' });

export const Me = z
  .object({
    user: z.string(),
    kind: z.enum(['person', 'service']),
    isAdmin: z.boolean().describe('admin through this token (a narrowed token never is)'),
    token: z.object({ id: z.string(), name: z.string() }),
    projects: z.array(z.object({ name: z.string(), role: RoleName })),
  })
  .meta({ id: 'Me' });

/** GET /v1/projects. */
export const ProjectList = z.object({ items: z.array(ProjectView) }).meta({ id: 'ProjectList' });

/** GET /v1/users. */
export const UserList = z.object({ items: z.array(UserView) }).meta({ id: 'UserList' });

/** GET /v1/tokens. */
export const TokenList = z.object({ items: z.array(TokenView) }).meta({ id: 'TokenList' });
