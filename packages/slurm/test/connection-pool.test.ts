import { ConnectionPool } from '@erg/slurm';

describe('ConnectionPool', () => {
  const cluster = { id: 'c1', host: '127.0.0.1', port: 2222, username: 'root', privateKey: 'k1', hostKeySha256: 'SHA256:x' };

  test('one connection per cluster, kept while its settings do not change', async () => {
    const pool = new ConnectionPool(2);
    const a = pool.get(cluster);
    expect(pool.get({ ...cluster })).toBe(a);
    expect(pool.get({ ...cluster, id: 'c2' })).not.toBe(a);
    await pool.closeAll();
  });

  test('a changed key, fingerprint or credentials version reconfigures the same connection, never closing it', async () => {
    const pool = new ConnectionPool(2);
    const a = pool.get(cluster);
    const b = pool.get({ ...cluster, hostKeySha256: 'SHA256:y' });
    // The same object, now with the new pin: callers holding it (a cycle in progress) are not left with a stale one.
    expect(b).toBe(a);
    expect(b.hostKeySha256).toBe('SHA256:y');
    await new Promise((resolve) => setImmediate(resolve));
    expect(a.state).not.toBe('closed');
    expect(pool.get({ ...cluster, hostKeySha256: 'SHA256:y', privateKey: 'k2', credentialsVersion: 2 })).toBe(a);
    const moved = pool.get({ ...cluster, host: '127.0.0.2', hostKeySha256: 'SHA256:y', privateKey: 'k2', credentialsVersion: 2 });
    expect(moved.hostPort).toBe('127.0.0.2:2222');
    await pool.closeAll();
    expect(a.state).toBe('closed');
  });
});
