import { randomBytes } from 'node:crypto';
import { SecretBox } from '@erg/secrets';
import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import {
  createCluster, createDatabase, DEFAULT_PROJECT, findClusterById, findProjectByName, jumpHostKeyContext, listClusterCertificates,
  openClusterCredentials, sealStoredSecrets, updateClusterCredentials, upsertCluster, type Database, type NewCluster,
} from '@erg/db';
import { poolOf } from '../src/client';

const OLD_KEY = randomBytes(32);
const OLD = new SecretBox(OLD_KEY);
const key = (n: string) => `-----BEGIN OPENSSH PRIVATE KEY-----\n${Buffer.from(`key ${n}`).toString('base64')}\n-----END OPENSSH PRIVATE KEY-----\n`;
const FP = `SHA256:${'B'.repeat(43)}`;
const CERT = 'ssh-ed25519-cert-v01@openssh.com AAAA cluster';
const JUMP_CERT = 'ssh-ed25519-cert-v01@openssh.com BBBB jump';

describe('cluster credentials in Postgres: jump hosts, certificates, rotation', () => {
  let tdb: TestDatabase;
  let db: Database;
  let projectId: string;
  const cluster = (name: string, extra: Partial<NewCluster> = {}): NewCluster => ({
    name, projectId, host: 'login', port: 22, username: 'erg', privateKey: key('cluster'), hostKeySha256: FP, workDir: '/w', ...extra,
  });
  const chain = [
    { host: 'bastion', port: 22, user: 'erg', privateKey: key('bastion'), certificate: JUMP_CERT, hostKeySha256: FP },
    { host: 'inner', port: 2200, user: 'erg', hostKeySha256: FP },
  ];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    projectId = (await findProjectByName(db, DEFAULT_PROJECT))!.id;
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  test("jump host keys are sealed for their row and position; one without a key gets the cluster's key and certificate", async () => {
    const c = await createCluster(db, cluster('a', { certificate: CERT, jumpHosts: chain }), OLD);
    expect(c).toMatchObject({ certificate: CERT, credentialsVersion: 1, credentialsUpdatedAt: null });
    const stored = (await poolOf(db).query<{ j: { privateKey: string | null }[] }>('SELECT jump_hosts AS j FROM clusters WHERE id = $1', [c.id])).rows[0]!.j;
    expect(stored[0]!.privateKey).toMatch(new RegExp(`^erg1:${OLD.keyId}:`));
    expect(stored[1]!.privateKey).toBeNull();
    expect(() => OLD.open(stored[0]!.privateKey!, jumpHostKeyContext(c.id, 1))).toThrow();
    expect(openClusterCredentials(OLD, c)).toEqual({
      privateKey: key('cluster'),
      certificate: CERT,
      jumpHosts: [
        { host: 'bastion', port: 22, user: 'erg', privateKey: key('bastion'), certificate: JUMP_CERT, hostKeySha256: FP },
        { host: 'inner', port: 2200, user: 'erg', privateKey: key('cluster'), certificate: CERT, hostKeySha256: FP },
      ],
    });
    expect((await listClusterCertificates(db)).find((r) => r.id === c.id)).toEqual({ id: c.id, name: 'a', certificate: CERT, jumpHosts: [{ certificate: JUMP_CERT }, { certificate: CERT }] });
  });

  test('updateClusterCredentials changes only what is given, bumps the version and clears the last error', async () => {
    const c = await createCluster(db, cluster('b', { certificate: CERT, jumpHosts: chain }), OLD);
    await poolOf(db).query("UPDATE clusters SET last_error = 'certificate expired' WHERE id = $1", [c.id]);
    const rotated = (await updateClusterCredentials(db, c.id, { certificate: 'ssh-ed25519-cert-v01@openssh.com CCCC new' }, OLD))!;
    expect(rotated).toMatchObject({ certificate: 'ssh-ed25519-cert-v01@openssh.com CCCC new', credentialsVersion: 2, lastError: null });
    expect(rotated.credentialsUpdatedAt).toBeInstanceOf(Date);
    expect(openClusterCredentials(OLD, rotated).privateKey).toBe(key('cluster'));
    expect(openClusterCredentials(OLD, rotated).jumpHosts[0]!.privateKey).toBe(key('bastion'));
    const rekeyed = (await updateClusterCredentials(db, c.id, { privateKey: key('new'), certificate: null, jumpHosts: [] }, OLD))!;
    expect(rekeyed).toMatchObject({ certificate: null, jumpHosts: [], credentialsVersion: 3 });
    expect(openClusterCredentials(OLD, rekeyed).privateKey).toBe(key('new'));
    expect(await updateClusterCredentials(db, '00000000-0000-4000-8000-000000000000', { certificate: null }, OLD)).toBeNull();
  });

  test('re-registering the same credentials keeps the version; a changed jump host bumps it', async () => {
    const first = await upsertCluster(db, cluster('c', { jumpHosts: chain }), OLD);
    expect((await upsertCluster(db, cluster('c', { jumpHosts: chain }), OLD)).credentialsVersion).toBe(first.credentialsVersion);
    const moved = await upsertCluster(db, cluster('c', { jumpHosts: [{ ...chain[0]!, port: 2222 }, chain[1]!] }), OLD);
    expect(moved.credentialsVersion).toBe(first.credentialsVersion + 1);
  });

  test('a key rotation of the secret box re-seals jump host keys too', async () => {
    const rotating = new SecretBox(randomBytes(32), [OLD_KEY]);
    const before = await sealStoredSecrets(db, rotating);
    // Cluster keys of a, b, c and the one jump host key of a and of c (b's chain is gone).
    expect(before).toEqual({ clusters: 5, suites: 0, unreadable: [] });
    const a = (await poolOf(db).query<{ id: string }>("SELECT id FROM clusters WHERE name = 'a'")).rows[0]!;
    const row = (await findClusterById(db, a.id))!;
    expect(row.jumpHosts[0]!.privateKey!.split(':')[1]).toBe(rotating.keyId);
    expect(openClusterCredentials(rotating, row).jumpHosts[0]!.privateKey).toBe(key('bastion'));
    expect(await sealStoredSecrets(db, rotating)).toEqual({ clusters: 0, suites: 0, unreadable: [] });
  });
});
