import { createHash, randomBytes } from 'node:crypto';
import type { Database } from './client';

/** Tokens look like `erg_<43 url-safe chars>`: the prefix makes a leaked token recognisable. */
const TOKEN_PREFIX = 'erg_';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface CreatedToken {
  id: string;
  /** The only time the secret exists in clear: show it once, store nothing but its hash. */
  token: string;
}

export async function createApiToken(db: Database, name: string, role = 'admin'): Promise<CreatedToken> {
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const row = await db.prisma.apiToken.create({
    data: { name, role, prefix: token.slice(0, 10), tokenHash: hashToken(token) },
  });
  return { id: row.id, token };
}

export interface TokenIdentity {
  id: string;
  name: string;
  role: string;
}

/** Looks a presented token up by hash; records when it was last used (at most once a minute). */
export async function authenticateToken(db: Database, token: string): Promise<TokenIdentity | null> {
  if (!token.startsWith(TOKEN_PREFIX)) return null;
  const row = await db.prisma.apiToken.findUnique({ where: { tokenHash: hashToken(token) } });
  if (!row || row.revokedAt) return null;
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > 60_000) {
    await db.prisma.apiToken.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } });
  }
  return { id: row.id, name: row.name, role: row.role };
}
