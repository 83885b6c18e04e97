/** The connection's options (connection-options.ts): defaults, the check made at construction, and what reconfigure replaces. */
import { ClusterConnection } from '../src';
import { checkMaxSessions, loginHostPort, resolveConnectionOptions, withEndpoint } from '../src/connection-options';

const base = { host: 'login.example.org', username: 'erg', privateKey: 'KEY', hostKeySha256: null };

describe('resolveConnectionOptions', () => {
  it('fills in every default, and keeps what was given', () => {
    expect(resolveConnectionOptions(base)).toEqual({
      ...base,
      port: 22,
      maxSessions: 8,
      connectTimeoutMs: 10_000,
      keepaliveIntervalMs: 15_000,
      keepaliveCountMax: 3,
      execTimeoutMs: 120_000,
      maxOutputBytes: 16 * 1024 * 1024,
      sftpTimeoutMs: 30_000,
      channelOpenRetries: 5,
      // No internal host allowed: public addresses only.
      allowHosts: [],
    });
    expect(resolveConnectionOptions({ ...base, port: 2222, maxSessions: 3 })).toMatchObject({ port: 2222, maxSessions: 3 });
  });
});

describe('checkMaxSessions', () => {
  it.each([0, -1, 1.5, Number.NaN])('refuses maxSessions %p, at construction already', (maxSessions) => {
    expect(() => checkMaxSessions(resolveConnectionOptions({ ...base, maxSessions }))).toThrow(RangeError);
    expect(() => new ClusterConnection({ ...base, maxSessions })).toThrow(`maxSessions must be a positive integer, got ${maxSessions}`);
  });

  it('refuses a backoff that is not one before looking at maxSessions', () => {
    expect(() => new ClusterConnection({ ...base, maxSessions: 0, backoff: { initialMs: -1 } })).toThrow('backoff initialMs must be ≥ 0, got -1');
  });
});

describe('withEndpoint', () => {
  const before = resolveConnectionOptions({ ...base, port: 2222, passphrase: 'pw', certificate: 'CERT', clusterName: 'gh', execTimeoutMs: 5 });

  it('replaces where and with what; the port defaults to 22 again; deadlines and limits stay', () => {
    const after = withEndpoint(before, { host: 'other.example.org', username: 'erg2', privateKey: 'KEY2', hostKeySha256: 'SHA256:x' });
    expect(after).toMatchObject({ host: 'other.example.org', port: 22, username: 'erg2', privateKey: 'KEY2', hostKeySha256: 'SHA256:x', execTimeoutMs: 5 });
    // Credentials not given are gone, not kept from before.
    expect(after.passphrase).toBeUndefined();
    expect(after.certificate).toBeUndefined();
    expect(after.jumpHosts).toBeUndefined();
    // The cluster's name is kept unless a new one is given.
    expect(after.clusterName).toBe('gh');
    expect(withEndpoint(before, { ...base, clusterName: 'gh2' }).clusterName).toBe('gh2');
    // The allowance comes with the endpoint (the project's cluster policy as it is now), none when not given.
    expect(withEndpoint(before, { ...base, allowHosts: ['10.0.0.0/8'] }).allowHosts).toEqual(['10.0.0.0/8']);
    expect(withEndpoint(resolveConnectionOptions({ ...base, allowHosts: ['10.0.0.0/8'] }), base).allowHosts).toEqual([]);
  });
});

describe('loginHostPort', () => {
  it('is host:port, port 22 when none is given', () => {
    expect(loginHostPort({ host: 'h' })).toBe('h:22');
    expect(loginHostPort({ host: 'h', port: 2200 })).toBe('h:2200');
  });
});
