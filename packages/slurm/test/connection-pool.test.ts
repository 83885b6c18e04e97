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

  test('a changed key or fingerprint replaces the connection and closes the old one', async () => {
    const pool = new ConnectionPool(2);
    const a = pool.get(cluster);
    const b = pool.get({ ...cluster, hostKeySha256: 'SHA256:y' });
    expect(b).not.toBe(a);
    await new Promise((resolve) => setImmediate(resolve));
    expect(a.state).toBe('closed');
    expect(pool.get({ ...cluster, hostKeySha256: 'SHA256:y', privateKey: 'k2' })).not.toBe(b);
    await pool.closeAll();
  });
});
