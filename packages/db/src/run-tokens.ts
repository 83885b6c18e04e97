import { randomBytes } from 'node:crypto';
import { poolOf, type Database } from './client';
import { hashToken } from './tokens';

/** Run tokens look like `ergr_<43 chars>`: the prefix tells them from API tokens at a glance. */
export const RUN_TOKEN_PREFIX = 'ergr_';

/** How long after its run ended a run token still works: agents drain their last batches. */
const GRACE_AFTER_END_MS = 15 * 60_000;

/** Mints (or replaces) the token a run's agents use; only its hash is stored. */
export async function issueRunToken(db: Database, runId: string): Promise<string> {
  const token = RUN_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  await poolOf(db).query(
    `INSERT INTO run_tokens (run_id, token_hash) VALUES ($1, $2)
     ON CONFLICT (run_id) DO UPDATE SET token_hash = EXCLUDED.token_hash, created_at = now()`,
    [runId, hashToken(token)],
  );
  return token;
}

/** The run a run token belongs to, or null when it is unknown or its run ended too long ago. */
export async function authenticateRunToken(db: Database, token: string): Promise<string | null> {
  if (!token.startsWith(RUN_TOKEN_PREFIX)) return null;
  const rows = await poolOf(db).query<{ run_id: string; ended_at: Date | null; finalized_at: Date | null }>(
    `SELECT t.run_id, r.ended_at, r.finalized_at FROM run_tokens t JOIN runs r ON r.id = t.run_id WHERE t.token_hash = $1`,
    [hashToken(token)],
  );
  const row = rows.rows[0];
  if (!row) return null;
  const end = row.finalized_at ?? row.ended_at;
  if (end && Date.now() - end.getTime() > GRACE_AFTER_END_MS) return null;
  return row.run_id;
}

/** issueRunToken for many runs in one statement (a submission batch). */
export async function issueRunTokens(db: Database, runIds: string[]): Promise<Map<string, string>> {
  const tokens = runIds.map(() => RUN_TOKEN_PREFIX + randomBytes(32).toString('base64url'));
  if (runIds.length > 0) {
    await poolOf(db).query(
      `INSERT INTO run_tokens (run_id, token_hash) SELECT * FROM unnest($1::uuid[], $2::text[])
       ON CONFLICT (run_id) DO UPDATE SET token_hash = EXCLUDED.token_hash, created_at = now()`,
      [runIds, tokens.map(hashToken)],
    );
  }
  return new Map(runIds.map((id, i) => [id, tokens[i]!]));
}
