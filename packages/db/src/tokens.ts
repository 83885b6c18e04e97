import { createHash, randomBytes } from 'node:crypto';
import { poolOf, prismaOf, type Database } from './client';
import { accessNoticeSql } from './access-notice';
/** An API token as listed and revoked: never its secret, nor its hash. */
export interface ApiTokenRecord {
  id: string;
  name: string;
  /** The secret's first characters, to recognise it by. */
  prefix: string;
  userId: string;
  /** null: never expires. */
  expiresAt: Date | null;
  /** Empty: every project of the user; else only these. */
  projectIds: string[];
  /** null: the user's own roles; else at most this one. */
  maxRole: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const API_TOKEN_COLUMNS = {
  id: true, name: true, prefix: true, userId: true, expiresAt: true, projectIds: true, maxRole: true, createdAt: true, lastUsedAt: true, revokedAt: true,
} as const;

/** Tokens look like `erg_<43 url-safe chars>`: the prefix makes a leaked token recognisable. */
const TOKEN_PREFIX = 'erg_';
/** The user every token belongs to when none is named (`admin.js create-token`, tests). */
export const BOOTSTRAP_ADMIN = 'admin';

export const ROLES = ['viewer', 'researcher', 'maintainer'] as const;
export type Role = (typeof ROLES)[number];

export function roleRank(role: Role): number {
  return ROLES.indexOf(role);
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface CreatedToken {
  id: string;
  /** The only time the secret exists in clear: show it once, store nothing but its hash. */
  token: string;
}

export interface TokenOptions {
  /** The token's user; default: the bootstrap admin user (created if missing). */
  userId?: string;
  expiresAt?: Date | null;
  /** Narrow the token to these projects (ids); empty or absent: every project of the user. */
  projectIds?: string[];
  /** Narrow the token to at most this role; absent: the user's own roles (and admin, if the user is one). */
  maxRole?: Role | null;
}

async function bootstrapAdmin(db: Database): Promise<string> {
  const user = await prismaOf(db).user.upsert({ where: { name: BOOTSTRAP_ADMIN }, create: { name: BOOTSTRAP_ADMIN, isAdmin: true }, update: {} });
  return user.id;
}

export async function createApiToken(db: Database, name: string, options: TokenOptions = {}): Promise<CreatedToken> {
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const userId = options.userId ?? (await bootstrapAdmin(db));
  const row = await prismaOf(db).apiToken.create({
    data: {
      name, userId, prefix: token.slice(0, 10), tokenHash: hashToken(token),
      expiresAt: options.expiresAt ?? null, projectIds: options.projectIds ?? [], maxRole: options.maxRole ?? null,
    },
  });
  return { id: row.id, token };
}

/**
 * A token's own bounds, as stored. A token with none of them (no expiry, every project of its
 * user, the user's own roles) is the user's **full** token.
 */
export interface TokenScope {
  /** null: never expires. */
  expiresAt: Date | null;
  /** Empty: every project of the user, now and later. */
  projectIds: string[];
  /** null: the user's own roles (and admin, for an admin user). */
  maxRole: Role | null;
}

/** One bound of `child` that lies outside `parent`'s (what a refusal names). */
export interface ScopeExcess {
  bound: 'expiresAt' | 'projects' | 'role';
  /** For `projects`: the child's project ids outside the parent's. */
  projectIds?: string[];
}

/**
 * Where `child` would be wider than `parent`: outlive it, reach a project outside its projects, or
 * carry a higher role cap. Empty: `child` is within `parent` — what a token may create, list and
 * revoke. Role caps compare as caps, not as today's effective roles, so that a later promotion of
 * the user cannot lift a child above its parent.
 */
export function scopeExcess(parent: TokenScope, child: TokenScope): ScopeExcess[] {
  const out: ScopeExcess[] = [];
  if (parent.expiresAt !== null && (child.expiresAt === null || child.expiresAt.getTime() > parent.expiresAt.getTime())) {
    out.push({ bound: 'expiresAt' });
  }
  if (parent.projectIds.length > 0) {
    const outside = child.projectIds.length === 0 ? ['*'] : child.projectIds.filter((id) => !parent.projectIds.includes(id));
    if (outside.length > 0) out.push({ bound: 'projects', projectIds: outside });
  }
  if (parent.maxRole !== null && (child.maxRole === null || roleRank(child.maxRole) > roleRank(parent.maxRole))) {
    out.push({ bound: 'role' });
  }
  return out;
}

export function scopeOf(token: Pick<ApiTokenRecord, 'expiresAt' | 'projectIds' | 'maxRole'>): TokenScope {
  return { expiresAt: token.expiresAt, projectIds: token.projectIds, maxRole: token.maxRole as Role | null };
}

/** Who is calling, with what the token allows: the user's roles narrowed by the token's scope. */
export interface TokenIdentity {
  /** The token's id. */
  id: string;
  /** The token's name. */
  name: string;
  userId: string;
  userName: string;
  /** Global admin: the user is one and the token is not narrowed. */
  isAdmin: boolean;
  /** The token is limited to some projects or a lower role than its user's. */
  narrowed: boolean;
  /** Effective role per project id. */
  roles: Map<string, Role>;
  /** The token's own bounds: what it may give a token it creates, and which tokens it sees. */
  scope: TokenScope;
}

/** Why a token that exists does not work (now): what an event stream that used it is told. */
export type TokenRefusal = 'token_revoked' | 'token_expired' | 'user_deactivated';

const IDENTITY_INCLUDE = { user: { include: { memberships: true } } } as const;

type TokenWithUser = ApiTokenRecord & {
  user: { name: string; isAdmin: boolean; deactivatedAt: Date | null; memberships: { projectId: string; role: string }[] };
};

/**
 * What a stored token may do now, or why it may do nothing: revoked, expired, or its user
 * deactivated. The one rule both signing in and re-checking open streams apply.
 */
function judgeToken(row: TokenWithUser, now = Date.now()): TokenIdentity | TokenRefusal {
  if (row.revokedAt) return 'token_revoked';
  if (row.user.deactivatedAt) return 'user_deactivated';
  if (row.expiresAt && row.expiresAt.getTime() <= now) return 'token_expired';
  const narrowed = row.projectIds.length > 0 || row.maxRole !== null;
  const cap = row.maxRole as Role | null;
  const roles = new Map<string, Role>();
  for (const m of row.user.memberships) {
    if (row.projectIds.length > 0 && !row.projectIds.includes(m.projectId)) continue;
    const role = m.role as Role;
    roles.set(m.projectId, cap !== null && roleRank(cap) < roleRank(role) ? cap : role);
  }
  return {
    id: row.id, name: row.name, userId: row.userId, userName: row.user.name, isAdmin: row.user.isAdmin && !narrowed, narrowed, roles, scope: scopeOf(row),
  };
}

/**
 * Looks a presented token up by hash and works out what it may do. Revoked and expired tokens,
 * and tokens of deactivated users, are refused (null). Records when it was last used (at most once
 * a minute, so that reads do not turn into writes).
 */
export async function authenticateToken(db: Database, token: string): Promise<TokenIdentity | null> {
  if (!token.startsWith(TOKEN_PREFIX)) return null;
  const row = await prismaOf(db).apiToken.findUnique({ where: { tokenHash: hashToken(token) }, include: IDENTITY_INCLUDE });
  if (!row) return null;
  const judged = judgeToken(row);
  if (typeof judged === 'string') return null;
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > 60_000) {
    await prismaOf(db).apiToken.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } });
  }
  return judged;
}

/**
 * The tokens with these ids as authenticateToken would judge them now (without recording a use):
 * for re-checking what long-lived responses (event streams) opened with them may still see. One
 * query for all of them; a token that no longer exists counts as revoked.
 */
export async function reauthenticateTokens(db: Database, ids: readonly string[]): Promise<Map<string, TokenIdentity | TokenRefusal>> {
  const out = new Map<string, TokenIdentity | TokenRefusal>();
  if (ids.length === 0) return out;
  const rows = await prismaOf(db).apiToken.findMany({ where: { id: { in: [...ids] } }, include: IDENTITY_INCLUDE });
  const now = Date.now();
  for (const row of rows) out.set(row.id, judgeToken(row, now));
  for (const id of ids) if (!out.has(id)) out.set(id, 'token_revoked');
  return out;
}

/**
 * Tokens, newest first: every user's (no `userId`), or one user's — and of those only the ones
 * within `within` when given (what a narrowed token may see).
 */
export async function listTokens(db: Database, userId?: string, within?: TokenScope): Promise<(ApiTokenRecord & { user: { name: string } })[]> {
  const rows = await prismaOf(db).apiToken.findMany({
    where: userId ? { userId } : {}, select: { ...API_TOKEN_COLUMNS, user: { select: { name: true } } }, orderBy: { createdAt: 'desc' },
  });
  // A user has a handful of tokens: filtering here keeps the one rule (scopeExcess) in one place.
  return within ? rows.filter((t) => scopeExcess(within, scopeOf(t)).length === 0) : rows;
}

export async function findToken(db: Database, id: string): Promise<ApiTokenRecord | null> {
  return prismaOf(db).apiToken.findUnique({ where: { id }, select: API_TOKEN_COLUMNS });
}

/**
 * Revokes a token (idempotent: the first revocation time stays), and tells every API process in
 * the same statement, so that streams opened with it end at once (see accessNoticeSql).
 */
export async function revokeToken(db: Database, id: string): Promise<ApiTokenRecord> {
  await poolOf(db).query(
    `WITH t AS (UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING id)
     SELECT ${accessNoticeSql('tokenId', 't.id')} FROM t`,
    [id],
  );
  return prismaOf(db).apiToken.findUniqueOrThrow({ where: { id }, select: API_TOKEN_COLUMNS });
}
