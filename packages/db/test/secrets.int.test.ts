import { randomBytes } from 'node:crypto';
import { SecretBox } from '@erg/secrets';
import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import {
  clusterKeyContext, createCluster, createDatabase, createSuite, DEFAULT_PROJECT, findClusterById, findProjectByName,
  findSuite, openClusterKey, openSuiteSecret, recordLearnedHostKey, replaceSuite, sealStoredSecrets, upsertCluster, type Database,
  type NewCluster, type SuiteInput,
} from '@erg/db';
import { poolOf } from '../src/client';
import { overwriteClusterHostKey, overwriteClusterPrivateKey, overwriteSuiteWebhookSecret } from '../src/testing';

const OLD_KEY = randomBytes(32);
const OLD = new SecretBox(OLD_KEY);
const NEW = new SecretBox(randomBytes(32));
const KEY = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n';
const FP = `SHA256:${'B'.repeat(43)}`;

describe('sealed secrets in Postgres', () => {
  let tdb: TestDatabase;
  let db: Database;
  let projectId: string;
  const cluster = (name: string, extra: Partial<NewCluster> = {}): NewCluster => ({
    name, projectId, host: '127.0.0.1', port: 2222, username: 'root', privateKey: KEY, hostKeySha256: FP, workDir: '/tmp/w', ...extra,
  });
  const suite = (name: string, webhookSecret: string | null): SuiteInput => ({
    name, projectId, description: null, template: {}, templateText: null, cron: null, timezone: 'UTC', baselinePolicy: 'last-passing',
    baselineCampaignId: null, policy: { threshold: 0.05, alpha: 0.05, minRepetitions: 3, maxCv: 0.25 }, webhookUrl: 'http://127.0.0.1:9/hook', webhookSecret,
  });

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    projectId = (await findProjectByName(db, DEFAULT_PROJECT))!.id; // made by the projects migration
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  const column = async (sql: string, id: string) => (await poolOf(db).query<{ v: string }>(sql, [id])).rows[0]!.v;

  test('a cluster private key is stored as erg1: ciphertext for its own row, and opens only there', async () => {
    const a = await createCluster(db, cluster('sealed-a'), OLD);
    const b = await createCluster(db, cluster('sealed-b'), OLD);
    const stored = await column('SELECT private_key AS v FROM clusters WHERE id = $1', a.id);
    expect(stored).toMatch(new RegExp(`^erg1:${OLD.keyId}:`));
    expect(stored).not.toContain('b3BlbnNzaC1rZXktdjEA');
    expect(openClusterKey(OLD, a)).toBe(KEY);
    // The same ciphertext copied into another row does not open there.
    await overwriteClusterPrivateKey(db, b.id, stored);
    const moved = (await findClusterById(db, b.id))!;
    expect(() => openClusterKey(OLD, moved)).toThrow(expect.objectContaining({ code: 'ERG_SECRET_UNREADABLE' }));
  });

  test('a suite webhook secret is sealed on create and on replace', async () => {
    const s = await createSuite(db, suite('nightly', 'whsec-123'), OLD);
    expect(await column('SELECT webhook_secret AS v FROM suites WHERE id = $1', s.id)).toMatch(/^erg1:/);
    expect(openSuiteSecret(OLD, (await findSuite(db, s.id))!)).toBe('whsec-123');
    const r = (await replaceSuite(db, 'nightly', suite('nightly', 'whsec-456'), OLD))!;
    expect(r.id).toBe(s.id);
    expect(openSuiteSecret(OLD, r)).toBe('whsec-456');
    expect(openSuiteSecret(OLD, (await replaceSuite(db, 'nightly', suite('nightly', null), OLD))!)).toBeNull();
  });

  test('legacy plaintext rows are read as they are, and seal-secrets seals them and re-seals a previous key', async () => {
    const legacy = await createCluster(db, cluster('legacy'), OLD);
    await overwriteClusterPrivateKey(db, legacy.id, KEY);
    const legacySuite = await createSuite(db, suite('legacy-suite', 'x'), OLD);
    await overwriteSuiteWebhookSecret(db, legacySuite.id, 'plain-secret');
    expect(openClusterKey(OLD, (await findClusterById(db, legacy.id))!)).toBe(KEY);

    // Rotation: the new key seals; the old one only opens.
    const rotating = new SecretBox(randomBytes(32), [OLD_KEY]);
    const report = await sealStoredSecrets(db, rotating);
    const clusters = await poolOf(db).query<{ id: string; name: string; private_key: string }>('SELECT id, name, private_key FROM clusters');
    // sealed-a and legacy re-sealed (nightly has no secret any more); sealed-b holds sealed-a's ciphertext (the test above): reported, left alone.
    const b = clusters.rows.find((r) => r.name === 'sealed-b')!;
    expect(report).toEqual({ clusters: 2, suites: 1, unreadable: [clusterKeyContext(b.id)] });
    for (const row of clusters.rows.filter((r) => r.name !== 'sealed-b')) {
      expect(row.private_key.split(':')[1]).toBe(rotating.keyId);
      expect(rotating.open(row.private_key, clusterKeyContext(row.id))).toBe(KEY);
    }
    expect(openSuiteSecret(rotating, (await findSuite(db, legacySuite.id))!)).toBe('plain-secret');
    // Nothing left to do the second time.
    await poolOf(db).query('DELETE FROM clusters WHERE name = $1', ['sealed-b']);
    expect(await sealStoredSecrets(db, rotating)).toEqual({ clusters: 0, suites: 0, unreadable: [] });
  });

  test('trust on first use: no fingerprint until the first connection records one; a re-PUT keeps it', async () => {
    const c = await createCluster(db, cluster('tofu', { hostKeySha256: undefined, hostKeyPolicy: 'trust-on-first-use' }), NEW);
    expect(c.hostKeySha256).toBeNull();
    expect(await recordLearnedHostKey(db, c.id, FP)).toBe(true);
    expect(await recordLearnedHostKey(db, c.id, `SHA256:${'C'.repeat(43)}`)).toBe(false);
    const again = await upsertCluster(db, cluster('tofu', { hostKeySha256: undefined, hostKeyPolicy: 'trust-on-first-use' }), NEW);
    expect(again.hostKeySha256).toBe(FP);
    expect(openClusterKey(NEW, again)).toBe(KEY);
    // Another host is another key: trust starts over.
    const moved = await upsertCluster(db, cluster('tofu', { host: '127.0.0.2', hostKeySha256: undefined, hostKeyPolicy: 'trust-on-first-use' }), NEW);
    expect(moved.hostKeySha256).toBeNull();
    // A pinned cluster cannot lose its fingerprint, whatever writes the row.
    const pinned = await createCluster(db, cluster('pinned'), NEW);
    await expect(overwriteClusterHostKey(db, pinned.name, null)).rejects.toThrow(/clusters_host_key_known_check/);
    expect(await recordLearnedHostKey(db, pinned.id, `SHA256:${'C'.repeat(43)}`)).toBe(false);
  });
});
