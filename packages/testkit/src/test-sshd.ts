import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { closedPort } from './ports';
import { waitFor } from './wait-for';

/**
 * sshd instances of a test's own, for the SSH tests that need a server the local cluster's sshd
 * (127.0.0.1:2222, shared) must not become: a bastion that only forwards, a login node that only
 * takes certificates of a test CA, a server whose host key changes. Each is /usr/sbin/sshd run
 * as a child (`-D`) with its own config, host key, port and log in a folder of its own; a login
 * node here is this machine, so its sessions reach the local Slurm cluster like the shared
 * sshd's. Needs root (as the local cluster does). Keys and certificates come from ssh-keygen,
 * as a site's would.
 */

const run = promisify(execFile);

/** A key pair made with `ssh-keygen` (no passphrase). */
export interface TestKey {
  /** The private key file. */
  path: string;
  privateKey: string;
  /** The `.pub` line. */
  publicKey: string;
}

/** A new key pair `name` in `dir` (ed25519 unless `type` says rsa or ecdsa). */
export function makeTestKey(dir: string, name: string, type: 'ed25519' | 'rsa' | 'ecdsa' = 'ed25519'): TestKey {
  const file = path.join(dir, name);
  rmSync(file, { force: true });
  rmSync(`${file}.pub`, { force: true });
  execFileSync('ssh-keygen', ['-q', '-t', type, ...(type === 'rsa' ? ['-b', '3072'] : []), '-N', '', '-C', name, '-f', file]);
  return { path: file, privateKey: readFileSync(file, 'utf8'), publicKey: readFileSync(`${file}.pub`, 'utf8').trim() };
}

export interface SignOptions {
  /** Who may log in with it (`-n`). Default root. */
  principals?: string[];
  /** `ssh-keygen -V`: e.g. `+1h`, `-1m:+10s`, `20200101:20200102`. Default `-1m:+1h`. */
  validity?: string;
  /** Default 1. */
  serial?: number;
  /** Default `erg-test`. */
  keyId?: string;
  /** A host certificate (`-h`) instead of a user one. */
  host?: boolean;
}

/** A certificate authority of the test's own (`ssh-keygen -s`), to sign user keys. */
export interface TestCa {
  key: TestKey;
  /** Signs `key`'s public key; returns the `-cert.pub` line. */
  sign(key: TestKey, options?: SignOptions): string;
}

export function makeTestCa(dir: string, name = 'ca'): TestCa {
  const key = makeTestKey(dir, name);
  let signed = 0;
  return {
    key,
    sign(subject, options = {}) {
      // A copy per signature: ssh-keygen writes NAME-cert.pub beside the .pub it signs.
      const base = path.join(dir, `signed-${++signed}-${path.basename(subject.path)}`);
      writeFileSync(`${base}.pub`, `${subject.publicKey}\n`);
      execFileSync('ssh-keygen', [
        '-q', '-s', key.path, ...(options.host ? ['-h'] : []), '-I', options.keyId ?? 'erg-test', '-n', (options.principals ?? ['root']).join(','),
        '-V', options.validity ?? '-1m:+1h', '-z', String(options.serial ?? 1), `${base}.pub`,
      ]);
      return readFileSync(`${base}-cert.pub`, 'utf8').trim();
    },
  };
}

export interface TestSshdOptions {
  /**
   * `login`: exec and SFTP, no forwarding (a login node). `jump`: a bastion — TCP forwarding
   * only (`ForceCommand /bin/false`, no tty, no SFTP), to `permitOpen` when given.
   */
  role: 'login' | 'jump';
  /** Public key lines accepted for every user (an authorized_keys file). */
  authorizedKeys?: string[];
  /** CA public key lines whose user certificates are accepted (TrustedUserCAKeys). */
  trustedUserCaKeys?: string[];
  /** jump: the only `host:port`s it forwards to (PermitOpen); default any. */
  permitOpen?: string[];
}

export interface TestSshd {
  readonly host: '127.0.0.1';
  readonly port: number;
  /** `SHA256:…` of its current host key, as ssh-keygen -lf prints it. */
  readonly hostKeySha256: string;
  readonly dir: string;
  /** Revokes these public keys (and every certificate of them) for new logins (RevokedKeys, read at each login). */
  revoke(publicKeys: string[]): void;
  /** Restarts the server on the same port; with `newHostKey`, under a new host key (what a reinstalled bastion presents). */
  restart(options?: { newHostKey?: boolean }): Promise<void>;
  /** Stops the listener (sessions it already forked end when their clients leave) and removes its folder. */
  stop(): Promise<void>;
}

/** UsePAM as deploy/local-slurm does: PAM only where root's password is locked (sshd without PAM refuses such accounts). */
function usePam(): 'yes' | 'no' {
  try {
    const field = execFileSync('getent', ['shadow', 'root'], { encoding: 'utf8' }).split(':')[1] ?? '';
    return field.startsWith('!') ? 'yes' : 'no';
  } catch {
    return 'no';
  }
}

function fingerprintOf(publicKeyLine: string): string {
  const blob = Buffer.from(publicKeyLine.trim().split(/\s+/)[1]!, 'base64');
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** Resolves once something on the port answers with an SSH banner. */
function answersSsh(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('data', (chunk: Buffer) => done(chunk.toString('latin1').startsWith('SSH-')));
    socket.once('error', () => done(false));
  });
}

/** Starts an sshd of the test's own on a free port of 127.0.0.1 and waits until it answers. */
export async function startTestSshd(options: TestSshdOptions): Promise<TestSshd> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `erg-sshd-${options.role}-`));
  let hostKey = makeTestKey(dir, 'host_ed25519');
  writeFileSync(path.join(dir, 'authorized_keys'), (options.authorizedKeys ?? []).map((k) => `${k}\n`).join(''), { mode: 0o600 });
  writeFileSync(path.join(dir, 'trusted_user_ca_keys'), (options.trustedUserCaKeys ?? []).map((k) => `${k}\n`).join(''), { mode: 0o600 });
  writeFileSync(path.join(dir, 'revoked_keys'), '', { mode: 0o600 });
  let port = await closedPort();
  let child: ChildProcess | null = null;

  const config = () =>
    [
      `# A test's own sshd (@erg/testkit test-sshd.ts): ${options.role}`,
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey.path}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      'PermitRootLogin prohibit-password',
      'PubkeyAuthentication yes',
      `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
      `TrustedUserCAKeys ${path.join(dir, 'trusted_user_ca_keys')}`,
      `RevokedKeys ${path.join(dir, 'revoked_keys')}`,
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      `UsePAM ${usePam()}`,
      // The files live under /tmp (world-writable): StrictModes would refuse them.
      'StrictModes no',
      'X11Forwarding no',
      'AllowAgentForwarding no',
      'PermitTunnel no',
      'PrintMotd no',
      'MaxStartups 100:30:200',
      'LogLevel VERBOSE',
      ...(options.role === 'login'
        ? ['AllowTcpForwarding no', 'MaxSessions 10', 'Subsystem sftp internal-sftp']
        : ['AllowTcpForwarding yes', ...(options.permitOpen ? [`PermitOpen ${options.permitOpen.join(' ')}`] : []), 'PermitTTY no', 'ForceCommand /bin/false']),
      '',
    ].join('\n');

  const launch = async () => {
    const file = path.join(dir, 'sshd_config');
    writeFileSync(file, config());
    await run('/usr/sbin/sshd', ['-t', '-f', file]);
    const log = openSync(path.join(dir, 'sshd.log'), 'a');
    const started = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', file], { stdio: ['ignore', log, log] });
    child = started;
    const exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
    await waitFor(
      async () => {
        if (started.exitCode !== null) throw new Error(`sshd exited (${started.exitCode}); see ${path.join(dir, 'sshd.log')}`);
        return answersSsh(port);
      },
      { timeoutMs: 15_000, intervalMs: 50, what: `the test sshd on port ${port}` },
    ).catch(async (err: unknown) => {
      started.kill('SIGTERM');
      await exited;
      throw err;
    });
    return { exited };
  };

  let exited: Promise<void> = Promise.resolve();
  for (let attempt = 0; ; attempt++) {
    try {
      ({ exited } = await launch());
      break;
    } catch (err) {
      // Another process took the port between closedPort() and sshd's bind: another port.
      if (attempt >= 3) throw err;
      port = await closedPort();
    }
  }
  const stopListener = async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    child = null;
  };

  return {
    host: '127.0.0.1',
    get port() {
      return port;
    },
    get hostKeySha256() {
      return fingerprintOf(hostKey.publicKey);
    },
    dir,
    revoke(publicKeys) {
      writeFileSync(path.join(dir, 'revoked_keys'), publicKeys.map((k) => `${k.trim()}\n`).join(''), { mode: 0o600 });
    },
    async restart(restartOptions = {}) {
      await stopListener();
      if (restartOptions.newHostKey) hostKey = makeTestKey(dir, 'host_ed25519');
      ({ exited } = await launch());
    },
    async stop() {
      await stopListener();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A TCP relay to a server that a test can cut (every connection through it dropped at once), to play a link that dies. */
export interface TcpRelay {
  readonly port: number;
  /** Destroys every connection through the relay; new ones are still accepted. */
  cut(): void;
  close(): Promise<void>;
}

export async function startTcpRelay(target: { host: string; port: number }): Promise<TcpRelay> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    for (const s of sockets) s.destroy();
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    cut,
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  };
}
