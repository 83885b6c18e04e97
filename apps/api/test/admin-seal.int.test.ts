// `admin.js seal-secrets` as an operator runs it (and `create-token`'s refusal of erg's own names): the built command on a database holding a
// plaintext key (a row from before sealing) and a key sealed with the previous key (rotation).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { clusterKeyContext, createCluster, createDatabase, DEFAULT_PROJECT, findClusterByName, findProjectByName, type Database } from '@erg/db';
import { overwriteClusterPrivateKey } from '@erg/db/testing';
import { SecretBox } from '@erg/secrets';
import { createTestDatabase, repoRoot, type TestDatabase } from '@erg/testkit';

const KEY = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n';

describe('admin.js seal-secrets', () => {
  let tdb: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  test('seals plaintext rows and re-seals the previous key\'s, then has nothing left to do', async () => {
    const [oldKey, newKey] = [randomBytes(32), randomBytes(32)];
    const projectId = (await findProjectByName(db, DEFAULT_PROJECT))!.id;
    const base = { projectId, host: '127.0.0.1', port: 22, username: 'root', privateKey: KEY, hostKeySha256: `SHA256:${'A'.repeat(43)}`, workDir: '/w' };
    const legacy = await createCluster(db, { ...base, name: 'legacy' }, new SecretBox(oldKey));
    await overwriteClusterPrivateKey(db, legacy.id, KEY);
    await createCluster(db, { ...base, name: 'old' }, new SecretBox(oldKey));

    const run = () =>
      execFileSync(process.execPath, [path.join(repoRoot(), 'apps/api/dist/admin.js'), 'seal-secrets'], {
        env: { ...process.env, DATABASE_URL: tdb.url, ERG_SECRET_KEY: newKey.toString('base64'), ERG_SECRET_KEY_PREVIOUS: oldKey.toString('base64') },
        encoding: 'utf8',
      });
    const box = new SecretBox(newKey);
    expect(run()).toBe(`sealed with key ${box.keyId}: 2 cluster private key(s), 0 webhook secret(s)\n`);
    for (const name of ['legacy', 'old']) {
      const c = (await findClusterByName(db, name))!;
      expect(c.privateKey.startsWith(`erg1:${box.keyId}:`)).toBe(true);
      expect(box.open(c.privateKey, clusterKeyContext(c.id))).toBe(KEY);
    }
    expect(run()).toMatch(/: 0 cluster private key\(s\), 0 webhook secret\(s\)/);
  });
});

describe('admin.js create-token', () => {
  test("refuses a name that would pass for erg's own (suite:, erg:), before touching the database", () => {
    const run = () => execFileSync(process.execPath, [path.join(repoRoot(), 'apps/api/dist/admin.js'), 'create-token', 'suite:nightly'], {
      env: { ...process.env, DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none' }, encoding: 'utf8', stdio: 'pipe',
    });
    expect(run).toThrow(expect.objectContaining({ status: 2, stderr: expect.stringContaining('token names beginning with "suite:" are erg\'s own') }));
  });
});
