/**
 * ClusterConnection against the real sshd of the local cluster (deploy/local-slurm, MaxSessions 10),
 * which listens on loopback: the connections allow it (allowHosts), as the cluster's project would.
 */
import net from 'node:net';
import { utils } from 'ssh2';
import { closedPort, loadLocalCluster, LOOPBACK_ALLOW_HOSTS, uniqueName, waitFor, type LocalCluster } from '@erg/testkit';
import {
  AddressNotAllowedError,
  ChannelOpenError,
  ClusterConnection,
  ClusterUnreachableError,
  ConnectionLostError,
  HostKeyMismatchError,
  OutputTooLargeError,
  shellQuote,
  SshAuthError,
  SshTimeoutError,
  type ClusterConnectionOptions,
} from '../src';

let cluster: LocalCluster;
let conn: ClusterConnection;
let dir: string;
const opened: ClusterConnection[] = [];

function connect(overrides: Partial<ClusterConnectionOptions> = {}): ClusterConnection {
  const c = new ClusterConnection({
    host: cluster.host,
    port: cluster.port,
    username: cluster.user,
    privateKey: cluster.privateKey,
    hostKeySha256: cluster.hostKeySha256,
    allowHosts: LOOPBACK_ALLOW_HOSTS,
    ...overrides,
  });
  opened.push(c);
  return c;
}

beforeAll(async () => {
  cluster = loadLocalCluster();
  conn = connect();
  dir = `${cluster.workDir}/slurm-ssh-e2e/${uniqueName('ssh')}`;
  const made = await conn.exec(`mkdir -p ${shellQuote(dir)}`);
  expect(made.code).toBe(0);
});

afterAll(async () => {
  if (dir) await conn.exec(`rm -rf ${shellQuote(dir)}`).catch(() => undefined);
  await Promise.all(opened.map((c) => c.close()));
});

describe('exec', () => {
  it('runs a command and returns exit code, stdout and stderr; a non-zero exit is a result', async () => {
    expect(conn.state).toBe('ready');
    expect(await conn.exec('echo out; echo err >&2; exit 7')).toEqual({ code: 7, signal: null, stdout: 'out\n', stderr: 'err\n' });
  });

  it("never loses a fast command's exit status (it can arrive before the caller listens)", async () => {
    // 300 commands that end at once, 8 at a time: before the fix a few came back with exit null
    // on the 24.11 cluster's sshd (exit-status sent within the channel-open round trip).
    const c = connect();
    const codes: (number | null)[] = [];
    for (let i = 0; i < 300; i += 8) {
      const batch = await Promise.all(Array.from({ length: 8 }, () => c.exec('exit 7')));
      codes.push(...batch.map((r) => r.code));
      const streamed = await c.execStream('exit 5');
      streamed.stdout.resume();
      codes.push(((await streamed.done).code ?? -1) - 5 + 7);
    }
    expect(codes.filter((code) => code !== 7)).toEqual([]);
  }, 120_000);

  it('feeds stdin and closes it', async () => {
    expect((await conn.exec('cat; echo end', { stdin: 'line 1\nline 2\n' })).stdout).toBe('line 1\nline 2\nend\n');
    expect((await conn.exec('cat; echo end')).stdout).toBe('end\n');
  });

  it('abandons a command past its deadline with a retryable SshTimeoutError, and stays usable', async () => {
    const started = Date.now();
    const err = await conn.exec('sleep 2', { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshTimeoutError);
    expect(err).toMatchObject({ code: 'ERG_SSH_TIMEOUT', retryable: true });
    expect(Date.now() - started).toBeLessThan(1500);
    expect((await conn.exec('echo still')).stdout).toBe('still\n');
    // The abandoned channel keeps its permit until sshd closes it (this sshd ignores the kill
    // signal for root logins, so that is when `sleep` ends), then gives it back.
    await waitFor(() => conn.channelStats.open === 0, { timeoutMs: 10_000, what: 'the timed-out channel to close' });
  }, 20_000);

  it('stops reading at maxOutputBytes with OutputTooLargeError', async () => {
    const err = await conn.exec('head -c 1000000 /dev/zero', { maxOutputBytes: 1000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutputTooLargeError);
    expect(err).toMatchObject({ code: 'ERG_SSH_OUTPUT_TOO_LARGE', retryable: false });
  });
});

describe('the channel cap (sshd MaxSessions = 10)', () => {
  it('runs 40 concurrent commands over one connection, never more than maxSessions channels at once', async () => {
    const capped = connect({ maxSessions: 8 });
    const live = `${dir}/live`;
    await capped.exec(`mkdir -p ${shellQuote(live)}`);
    // Each command counts, on the server, the commands running at the same moment: a file per
    // running command. That measures concurrency where sshd counts it, not only in our client.
    const command = `touch ${shellQuote(live)}/$$; n=$(ls ${shellQuote(live)} | wc -l); sleep 0.3; rm -f ${shellQuote(live)}/$$; echo "x $n"`;
    const results = await Promise.all(Array.from({ length: 40 }, () => capped.exec(command)));
    expect(results.every((r) => r.code === 0 && /^x \d+\n$/.test(r.stdout))).toBe(true);
    const serverMax = Math.max(...results.map((r) => Number(r.stdout.split(' ')[1])));
    expect(serverMax).toBeLessThanOrEqual(8);
    expect(serverMax).toBeGreaterThan(1); // they did run concurrently
    expect(capped.channelStats.maxOpen).toBe(8); // the cap was reached, and held
    expect(capped.channelStats.open).toBe(0);
  }, 60_000);

  it('is needed: without it sshd refuses channels beyond its MaxSessions', async () => {
    // No retries of refused opens either: they would mask what this test shows.
    const uncapped = connect({ maxSessions: 40, channelOpenRetries: 0 });
    const settled = await Promise.allSettled(Array.from({ length: 40 }, () => uncapped.exec('sleep 0.5; echo x')));
    const refused = settled.filter((s) => s.status === 'rejected').map((s) => (s as PromiseRejectedResult).reason as unknown);
    expect(refused.length).toBeGreaterThan(0);
    for (const err of refused) expect(err).toBeInstanceOf(ChannelOpenError);
    expect(refused[0]).toMatchObject({ code: 'ERG_SSH_CHANNEL_REFUSED', retryable: true });
  }, 60_000);

  it("asks again for a channel sshd refused, and gets it once a session slot frees: the caller never sees the refusal", async () => {
    // sshd's 10 session slots taken by 10 sleeps of this connection (its own cap above sshd's, on
    // purpose); the 11th command is refused at first, asked for again (25, 50, 100 … ms) and runs
    // once a sleep ends. The same lag, shorter, is what a cap under MaxSessions meets after a close.
    const eager = connect({ maxSessions: 12, channelOpenRetries: 7 });
    const sleeps = Array.from({ length: 10 }, () => eager.exec('sleep 1.5'));
    await waitFor(() => eager.channelStats.open === 10, { timeoutMs: 10_000, what: 'ten channels open' });
    const late = await eager.exec('echo x');
    expect(late.stdout).toBe('x\n');
    expect(eager.channelStats.reopened).toBeGreaterThan(0);
    expect((await Promise.all(sleeps)).map((r) => r.code)).toEqual(Array(10).fill(0));
  }, 60_000);
});

describe('writeFiles / readFile over SFTP', () => {
  it('creates the directory, writes every file with its mode, and reads them back', async () => {
    const target = `${dir}/stage/run_1`;
    const big = 'x'.repeat(300_000);
    await conn.writeFiles(target, [
      { name: 'job.sh', content: '#!/bin/bash\necho hi\n', mode: 0o755 },
      { name: 'config.json', content: '{"a": "é"}\n', mode: 0o644 },
      { name: 'secret', content: 's', mode: 0o600 },
      { name: 'big.txt', content: big, mode: 0o644 },
    ]);
    const modes = await conn.exec(`cd ${shellQuote(target)} && stat -c '%a %n' job.sh config.json secret big.txt`);
    expect(modes.stdout).toBe('755 job.sh\n644 config.json\n600 secret\n644 big.txt\n');
    expect((await conn.readFile(`${target}/config.json`))?.text).toBe('{"a": "é"}\n');
    const whole = await conn.readFile(`${target}/big.txt`);
    expect(whole).toMatchObject({ size: 300_000, truncated: false });
    expect(whole?.text).toBe(big);
    expect((await conn.exec(`bash ${shellQuote(`${target}/job.sh`)}`)).stdout).toBe('hi\n');
  });

  it('overwrites existing files, content and mode', async () => {
    const target = `${dir}/stage/run_2`;
    await conn.writeFiles(target, [{ name: 'f', content: 'a much longer first version', mode: 0o644 }]);
    await conn.writeFiles(target, [{ name: 'f', content: 'v2', mode: 0o755 }]);
    expect((await conn.readFile(`${target}/f`))?.text).toBe('v2');
    expect((await conn.exec(`stat -c %a ${shellQuote(`${target}/f`)}`)).stdout).toBe('755\n');
  });

  it('reads the head or the tail of a file, and null for a missing file', async () => {
    const target = `${dir}/stage/run_3`;
    await conn.writeFiles(target, [{ name: 'log', content: '0123456789', mode: 0o644 }]);
    expect(await conn.readFile(`${target}/log`, { maxBytes: 4 })).toMatchObject({ text: '0123', size: 10, truncated: true });
    expect(await conn.readFile(`${target}/log`, { maxBytes: 4, fromEnd: true })).toMatchObject({ text: '6789', truncated: true });
    expect(await conn.readFile(`${target}/missing`)).toBeNull();
  });

  it('keeps one SFTP channel open and shares it', async () => {
    // After the writes above, the connection holds exactly one channel: its SFTP subsystem.
    await waitFor(() => conn.channelStats.open === 1, { timeoutMs: 5000, what: 'only the SFTP channel to stay open' });
    await Promise.all(Array.from({ length: 20 }, (_, i) => conn.writeFiles(`${dir}/stage/many_${i}`, [{ name: 'a', content: `${i}`, mode: 0o644 }])));
    expect(conn.channelStats.open).toBe(1);
  });
});

describe('connection failures', () => {
  it('refuses a host key other than the pinned one, before any command runs', async () => {
    const marker = `${dir}/mitm-marker`;
    const wrong = 'SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const mitm = connect({ hostKeySha256: wrong });
    const err = await mitm.exec(`touch ${shellQuote(marker)}`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostKeyMismatchError);
    expect(err).toMatchObject({ code: 'ERG_SSH_HOST_KEY_MISMATCH', retryable: false, expected: wrong, actual: cluster.hostKeySha256 });
    const message = (err as Error).message;
    for (const part of [`${cluster.host}:${cluster.port}`, wrong, cluster.hostKeySha256, 'hostKeySha256']) expect(message).toContain(part);
    expect(mitm.state).toBe('backoff');
    expect(mitm.lastError).toBe(err);
    expect((await conn.exec(`test -e ${shellQuote(marker)} && echo yes || echo no`)).stdout).toBe('no\n');
  });

  it('resolves the login node itself and connects to the address it checked; an internal address not allowed is never connected to', async () => {
    // No DNS knows this name: the session can only have reached sshd at the address the resolver gave and the policy checked.
    const asked: string[] = [];
    const resolve = async (name: string) => {
      asked.push(name);
      return [{ address: cluster.host, family: 4 }];
    };
    const viaName = connect({ host: 'login.rebind.test', resolve });
    expect((await viaName.exec('echo reached')).stdout).toBe('reached\n');
    expect(asked).toEqual(['login.rebind.test']);

    const refused = connect({ allowHosts: [] });
    const err = await refused.exec('true').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AddressNotAllowedError);
    expect(err).toMatchObject({ code: 'ERG_SSH_ADDRESS_NOT_ALLOWED', retryable: false, address: cluster.host, addressClass: 'loopback' });
    expect((err as Error).message).toMatch(/is a loopback address, inside erg's own network; an admin allows it .*cluster-policy/);
    expect(refused.lastError).toBe(err);
    // A name with one internal address among public ones is refused as a whole.
    const mixed = connect({ host: 'login.rebind.test', allowHosts: [], resolve: async () => [{ address: '93.184.215.14', family: 4 }, { address: cluster.host, family: 4 }] });
    expect(await mixed.exec('true').catch((e: unknown) => e)).toMatchObject({ code: 'ERG_SSH_ADDRESS_NOT_ALLOWED', host: 'login.rebind.test', address: cluster.host });
  });

  it('reports a closed port quickly as a retryable ClusterUnreachableError, then backs off', async () => {
    const port = await closedPort();
    const down = connect({ port, backoff: { initialMs: 60_000 } });
    const started = Date.now();
    const err = await down.exec('true').catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(err).toBeInstanceOf(ClusterUnreachableError);
    expect(err).toMatchObject({ code: 'ERG_SSH_UNREACHABLE', retryable: true });
    expect((err as Error).message).toContain(`${cluster.host}:${port}`);
    // During the backoff, calls fail at once with the same error instead of reconnecting.
    expect(down.state).toBe('backoff');
    expect(down.nextAttemptAt).toBeGreaterThan(Date.now());
    await expect(down.exec('true')).rejects.toBe(err);
  });

  it('gives up within connectTimeoutMs on a port that never answers the handshake', async () => {
    // A TCP listener that accepts and stays silent: the SSH handshake never completes.
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as net.AddressInfo).port;
      const started = Date.now();
      const err = await connect({ port, connectTimeoutMs: 500 }).exec('true').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClusterUnreachableError);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      silent.close();
    }
  });

  it('reports a key the server does not accept as SshAuthError (not retryable)', async () => {
    const stranger = utils.generateKeyPairSync('ed25519');
    const err = await connect({ privateKey: stranger.private }).exec('true').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SshAuthError);
    expect(err).toMatchObject({ code: 'ERG_SSH_AUTH', retryable: false });
    expect((err as Error).message).toContain(`${cluster.host}:${cluster.port}`);
  });

  it('fails operations in flight with ConnectionLostError when the connection drops, then reconnects', async () => {
    const fragile = connect();
    expect((await fragile.exec('echo up')).stdout).toBe('up\n');
    const inFlight = fragile.exec('sleep 30');
    // Kill this connection's own sshd session process, as a network cut or sshd restart would.
    await fragile.exec('kill -9 $PPID').catch(() => undefined);
    const err = await inFlight.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLostError);
    expect(err).toMatchObject({ code: 'ERG_SSH_CONNECTION_LOST', retryable: true });
    expect(fragile.lastError).toBeInstanceOf(ConnectionLostError);
    expect(fragile.state).toBe('idle');
    expect((await fragile.exec('echo again')).stdout).toBe('again\n');
    expect(fragile.state).toBe('ready');
    expect(fragile.lastError).toBeNull();
  });

  it('refuses calls after close()', async () => {
    const c = connect();
    await c.exec('true');
    await c.close();
    expect(c.state).toBe('closed');
    await expect(c.exec('true')).rejects.toMatchObject({ code: 'ERG_SSH_CLOSED' });
  });
});
