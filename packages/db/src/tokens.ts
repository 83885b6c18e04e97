import { createHash, randomBytes } from 'node:crypto';
import type { Database } from './client';
import type { ApiToken } from './generated/client';

export type { ApiToken };

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
  const user = await db.prisma.user.upsert({ where: { name: BOOTSTRAP_ADMIN }, create: { name: BOOTSTRAP_ADMIN, isAdmin: true }, update: {} });
  return user.id;
}

export async function createApiToken(db: Database, name: string, options: TokenOptions = {}): Promise<CreatedToken> {
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const userId = options.userId ?? (await bootstrapAdmin(db));
  const row = await db.prisma.apiToken.create({
    data: {
      name, userId, prefix: token.slice(0, 10), tokenHash: hashToken(token),
      expiresAt: options.expiresAt ?? null, projectIds: options.projectIds ?? [], maxRole: options.maxRole ?? null,
    },
  });
  return { id: row.id, token };
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
}

/**
 * Looks a presented token up by hash and works out what it may do. Revoked and expired tokens,
 * and tokens of disabled users, are refused (null). Records when it was last used (at most once
 * a minute, so that reads do not turn into writes).
 */
export async function authenticateToken(db: Database, token: string): Promise<TokenIdentity | null> {
  if (!token.startsWith(TOKEN_PREFIX)) return null;
  const row = await db.prisma.apiToken.findUnique({
    where: { tokenHash: hashToken(token) },
    include: { user: { include: { memberships: true } } },
  });
  if (!row || row.revokedAt || row.user.disabledAt) return null;
  if (row.expiresAt && row.expiresAt.getTime() <= Date.now()) return null;
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > 60_000) {
    await db.prisma.apiToken.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } });
  }
  const narrowed = row.projectIds.length > 0 || row.maxRole !== null;
  const cap = row.maxRole as Role | null;
  const roles = new Map<string, Role>();
  for (const m of row.user.memberships) {
    if (row.projectIds.length > 0 && !row.projectIds.includes(m.projectId)) continue;
    const role = m.role as Role;
    roles.set(m.projectId, cap !== null && roleRank(cap) < roleRank(role) ? cap : role);
  }
  return { id: row.id, name: row.name, userId: row.userId, userName: row.user.name, isAdmin: row.user.isAdmin && !narrowed, narrowed, roles };
}

export async function listTokens(db: Database, userId?: string): Promise<(ApiToken & { user: { name: string } })[]> {
  return db.prisma.apiToken.findMany({ where: userId ? { userId } : {}, include: { user: { select: { name: true } } }, orderBy: { createdAt: 'desc' } });
}

export async function findToken(db: Database, id: string): Promise<ApiToken | null> {
  return db.prisma.apiToken.findUnique({ where: { id } });
}

/** Revokes a token (idempotent: the first revocation time stays). */
export async function revokeToken(db: Database, id: string): Promise<ApiToken> {
  await db.pool.query('UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1', [id]);
  return db.prisma.apiToken.findUniqueOrThrow({ where: { id } });
}
