// A project's cluster policy in Postgres (issue 27 §4): read with every cluster record (its
// connections check against it), the strictest policy when unset or unreadable, and — for
// clusters registered before the policy existed — started by its migration with the hosts they
// are reached at first, so that upgrading stops none of them.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { SecretBox } from '@erg/secrets';
import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import {
  createCluster, createDatabase, createProject, defaultMigrationsDir, findClusterById, readClusterPolicy, setProjectClusterPolicy, type Database, type NewCluster,
} from '@erg/db';
import { poolOf } from '../src/client';

const SECRETS = new SecretBox(randomBytes(32));
const KEY = `-----BEGIN OPENSSH PRIVATE KEY-----\n${Buffer.from('key').toString('base64')}\n-----END OPENSSH PRIVATE KEY-----\n`;
const FP = `SHA256:${'B'.repeat(43)}`;

describe('cluster policies in Postgres', () => {
  let tdb: TestDatabase;
  let db: Database;
  const cluster = (name: string, projectId: string, extra: Partial<NewCluster> = {}): NewCluster => ({
    name, projectId, host: 'login.example.org', port: 22, username: 'erg', privateKey: KEY, hostKeySha256: FP, workDir: '/w', ...extra,
  });

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  test('a cluster record carries its project\'s policy as it is now; unset or unreadable reads as public addresses only', async () => {
    const p = await createProject(db, { name: 'p-read' });
    const c = await createCluster(db, cluster('read-1', p.id), SECRETS);
    expect(c.clusterPolicy).toEqual({ allowHosts: [] });
    await setProjectClusterPolicy(db, 'p-read', { allowHosts: ['10.0.0.0/8', 'login.cluster.internal'] });
    expect((await findClusterById(db, c.id))!.clusterPolicy).toEqual({ allowHosts: ['10.0.0.0/8', 'login.cluster.internal'] });
    expect(readClusterPolicy({ allowHosts: 'not a list' })).toEqual({ allowHosts: [] });
    expect(readClusterPolicy(null)).toEqual({ allowHosts: [] });
  });

  test('the migration allows, per project, the first hop of every cluster registered before it (login node, or first jump host)', async () => {
    const a = await createProject(db, { name: 'p-old-a' });
    const b = await createProject(db, { name: 'p-old-b' });
    await createProject(db, { name: 'p-old-empty' });
    await createCluster(db, cluster('old-1', a.id, { host: '10.1.2.3' }), SECRETS);
    await createCluster(db, cluster('old-2', a.id, { host: 'Login.Cluster.Internal' }), SECRETS);
    await createCluster(db, cluster('old-3', a.id, { host: '10.1.2.3', port: 2222 }), SECRETS);
    await createCluster(db, cluster('old-4', b.id, {
      host: '10.9.9.9', jumpHosts: [{ host: '192.168.7.1', port: 22, user: 'j', hostKeySha256: FP }, { host: 'inner', port: 22, user: 'j', hostKeySha256: FP }],
    }), SECRETS);
    // As the database was before the migration, then the migration as it ships.
    await poolOf(db).query('ALTER TABLE projects DROP COLUMN cluster_policy');
    await poolOf(db).query(readFileSync(path.join(defaultMigrationsDir(), '20261210030000_cluster_policy', 'migration.sql'), 'utf8'));
    const policies = await poolOf(db).query<{ name: string; cluster_policy: unknown }>(
      'SELECT name, cluster_policy FROM projects WHERE name = ANY($1) ORDER BY name', [['p-old-a', 'p-old-b', 'p-old-empty']],
    );
    expect(policies.rows).toEqual([
      { name: 'p-old-a', cluster_policy: { allowHosts: ['10.1.2.3', 'login.cluster.internal'] } },
      // The first jump host is what erg reaches; the login node behind it is the jump host's to reach.
      { name: 'p-old-b', cluster_policy: { allowHosts: ['192.168.7.1'] } },
      { name: 'p-old-empty', cluster_policy: {} },
    ]);
  });
});
