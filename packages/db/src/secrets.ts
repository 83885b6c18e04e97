import type { SecretBox } from '@erg/secrets';
import { poolOf, type Database } from './client';
import { clusterKeyContext, resealJumpHostKeys } from './clusters';
import { suiteSecretContext } from './suites';

// Sealing stored secrets again, across the tables that hold them. Each sealed column's context
// (which row it belongs to) and its opener live with the table that owns the column: clusters.ts
// (clusterKeyContext, jumpHostKeyContext, openClusterKey) and suites.ts (suiteSecretContext,
// openSuiteSecret). This file only walks them all for a rotation.

export interface SealReport {
  clusters: number;
  suites: number;
  /** Contexts of values that could not be opened (unknown key, altered, or moved from another row); left as they are. */
  unreadable: string[];
}

/**
 * Seals every stored secret that is plaintext (written before sealing existed) or sealed with a
 * key other than the current one (rotation). Each row is rewritten only if it still holds what
 * was read, so a cluster or suite replaced meanwhile is left as its writer sealed it.
 */
export async function sealStoredSecrets(db: Database, secrets: SecretBox): Promise<SealReport> {
  const report: SealReport = { clusters: 0, suites: 0, unreadable: [] };
  // One unreadable row must not keep the others in plaintext or under a key being retired.
  const reseal = (stored: string, context: string): string | null => {
    try {
      return secrets.seal(secrets.openStored(stored, context), context);
    } catch {
      report.unreadable.push(context);
      return null;
    }
  };
  const clusters = await poolOf(db).query<{ id: string; private_key: string }>(`SELECT id, private_key FROM clusters`);
  for (const row of clusters.rows) {
    if (!secrets.needsSealing(row.private_key)) continue;
    const sealed = reseal(row.private_key, clusterKeyContext(row.id));
    if (sealed === null) continue;
    const done = await poolOf(db).query(`UPDATE clusters SET private_key = $2, updated_at = now() WHERE id = $1 AND private_key = $3`, [row.id, sealed, row.private_key]);
    report.clusters += done.rowCount ?? 0;
  }
  // Jump hosts' keys are cluster private keys too (clusters.ts seals them in the jump_hosts list).
  report.clusters += await resealJumpHostKeys(db, (stored) => secrets.needsSealing(stored), reseal);
  const suites = await poolOf(db).query<{ id: string; webhook_secret: string }>(`SELECT id, webhook_secret FROM suites WHERE webhook_secret IS NOT NULL`);
  for (const row of suites.rows) {
    if (!secrets.needsSealing(row.webhook_secret)) continue;
    const sealed = reseal(row.webhook_secret, suiteSecretContext(row.id));
    if (sealed === null) continue;
    const done = await poolOf(db).query(`UPDATE suites SET webhook_secret = $2, updated_at = now() WHERE id = $1 AND webhook_secret = $3`, [row.id, sealed, row.webhook_secret]);
    report.suites += done.rowCount ?? 0;
  }
  return report;
}
