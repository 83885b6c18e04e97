/**
 * The hop chain: the SSH connections one connect attempt walks to reach the login node — its
 * jump hosts, then the login node itself — each with its own user, key, certificate and pinned
 * host key, and how each hop's failure is classified and named.
 *
 * Jump hosts (bastions)
 * - With `jumpHosts`, a session is a chain: erg connects to the first jump host, asks it to
 *   forward a TCP connection to the next hop (`direct-tcpip`, what `ssh -J` does), runs the next
 *   SSH connection inside it, and so on to the login node. Every hop has its own user, key,
 *   certificate and pinned host key; jump hosts have no trust on first use.
 * - The chain is one connect attempt: any hop's failure fails it, classified as below and naming
 *   the hop (`jump host bastion.example.org:22`), and the backoff applies to the whole chain
 *   (session-manager.ts).
 * - A hop that drops ends the session (ConnectionLostError naming the hop); closing the session
 *   closes every hop.
 *
 * Classification: host key mismatch (HostKeyMismatchError, never retried silently),
 * authentication (SshAuthError), everything else (ClusterUnreachableError).
 *
 * Address policy
 * - The first hop is the one erg reaches itself, from inside its own network: before each
 *   attempt its name is resolved here, every address it resolves to is checked against the
 *   allowance (`allowHosts`, the project's cluster policy; @erg/address-policy), and the TCP
 *   connection goes to exactly the address checked — a second resolution (DNS rebinding) cannot
 *   swap it. An internal address not allowed fails the attempt (AddressNotAllowedError) before
 *   any packet is sent to it.
 * - Later hops are reached through the hop before, which resolves their names in its own network:
 *   erg does not check them (allowing a jump host lets it forward wherever it can reach).
 *
 * Certificates
 * - A hop with an OpenSSH user certificate offers it first, then the plain key (certificate-auth.ts).
 *   A certificate past its validity is never offered: erg does not connect (CertificateExpiredError,
 *   no attempt, no backoff), and a live session whose certificate expires is retired
 *   (session-manager.ts).
 */
import type { Duplex } from 'node:stream';
import { compileAllowance, resolveAllowed, systemResolver } from '@erg/address-policy';
import { Client } from 'ssh2';
import { certificateExpired, parseCertificate, type CertificateParse, type SshCertificate } from './certificate';
import { installCertificateAuth, publickeyAuthHandler } from './certificate-auth';
import { AddressNotAllowedError, ClusterUnreachableError, HostKeyMismatchError, SshAuthError, type ErgSlurmError } from './errors';
import { fingerprintsEqual, hostKeyFingerprint } from './host-key';
import { loginHostPort, type ResolvedConnectionOptions } from './connection-options';

/** One SSH connection of a chain, as connectChain walks it. */
export interface Hop {
  /** How messages name it: `login.example.org:22`, or `jump host bastion.example.org:22`. */
  label: string;
  /** Whose login it is, for certificate messages: `erg@login.example.org:22`, `erg@bastion.example.org:22 (jump host 1)`. */
  account: string;
  /** A jump host, not the login node (authentication messages differ). */
  isJumpHost: boolean;
  host: string;
  port: number;
  username: string;
  privateKey: string | Buffer;
  passphrase: string | undefined;
  certificate: SshCertificate | null;
  /** Why the configured certificate cannot be used (does not parse); null when fine or none. */
  certificateProblem: string | null;
  /** The fingerprint required of it; null: trust on first use (the login node only). */
  pin: string | null;
  /** The cluster setting that pins it, for the mismatch message. */
  pinField: string;
  /** What to run to rotate its certificate. */
  rotate: string;
}

/** The deadlines and keepalives every hop connects with, and where the first hop may be (module comment: address policy). */
export type ChainSettings = Pick<ResolvedConnectionOptions, 'connectTimeoutMs' | 'keepaliveIntervalMs' | 'keepaliveCountMax'> &
  Partial<Pick<ResolvedConnectionOptions, 'allowHosts' | 'resolve'>>;

/** A connected chain: the login node's client, and the jump hosts' it runs through. */
export interface ConnectedChain {
  client: Client;
  /** The jump hosts' connections, first hop first; empty without jump hosts. */
  via: Client[];
  /** The login node's host key fingerprint as it presented it. */
  presented: string | null;
}

/**
 * The chain of `o`: its jump hosts, then the login node, which must show `pinned` (null: trust
 * on first use). `certificates` caches parsed certificates by their text: the chain is built on
 * every call to look at their expiry.
 */
export function hopsOf(o: ResolvedConnectionOptions, pinned: string | null, certificates: Map<string, CertificateParse>): Hop[] {
  const name = o.clusterName ?? 'NAME';
  const hostPort = loginHostPort(o);
  const certificateOf = (text: string | null | undefined) => {
    if (!text) return { certificate: null, certificateProblem: null };
    let parsed = certificates.get(text);
    if (!parsed) certificates.set(text, (parsed = parseCertificate(text)));
    return parsed.ok ? { certificate: parsed.certificate, certificateProblem: null } : { certificate: null, certificateProblem: parsed.message };
  };
  const clusterRotate = `erg clusters credentials ${name} --cert FILE`;
  const jumps = (o.jumpHosts ?? []).map((j, i): Hop => {
    const port = j.port ?? 22;
    return {
      label: `jump host ${j.host}:${port}`,
      account: `${j.username}@${j.host}:${port} (jump host ${i + 1})`,
      isJumpHost: true,
      host: j.host,
      port,
      username: j.username,
      privateKey: j.privateKey,
      passphrase: undefined,
      ...certificateOf(j.certificate),
      pin: j.hostKeySha256,
      pinField: `jumpHosts[${i}].hostKeySha256`,
      // A jump host that logs in with the cluster's certificate is fixed by rotating that one.
      rotate: j.certificate && j.certificate === o.certificate
        ? clusterRotate
        : `erg clusters credentials ${name} --jump 'USER@HOST:PORT,host-key=SHA256:…,key=FILE,cert=FILE' (every jump host, in order, jump host ${i + 1} with its new cert)`,
    };
  });
  const target: Hop = {
    label: hostPort,
    account: `${o.username}@${hostPort}`,
    isJumpHost: false,
    host: o.host,
    port: o.port,
    username: o.username,
    privateKey: o.privateKey,
    passphrase: o.passphrase,
    ...certificateOf(o.certificate),
    pin: pinned,
    pinField: 'hostKeySha256',
    rotate: clusterRotate,
  };
  return [...jumps, target];
}

/** The first hop whose certificate has expired, if any. */
export function expiredHop(hops: readonly Hop[], now = new Date()): Hop | undefined {
  return hops.find((h) => h.certificate !== null && certificateExpired(h.certificate, now));
}

/**
 * Connects hop after hop, each inside a connection forwarded by the one before; the first to the
 * address firstHopAddress checked. On any hop's failure the hops already connected are ended and
 * the failure (classified, naming the hop) thrown.
 */
export async function connectChain(hops: readonly Hop[], settings: ChainSettings): Promise<ConnectedChain> {
  const opened: Client[] = [];
  let presented: string | null = null;
  try {
    let sock: Duplex | undefined;
    for (const [i, hop] of hops.entries()) {
      const target = sock ?? (await firstHopAddress(hop, settings));
      const hopConnected = await new HopLogin(hop, target, settings).done;
      opened.push(hopConnected.client);
      presented = hopConnected.presented;
      const next = hops[i + 1];
      if (next) sock = await forward(hopConnected.client, hop, next, settings.connectTimeoutMs);
    }
  } catch (err) {
    for (const client of opened) client.end();
    throw err;
  }
  const client = opened.pop()!;
  return { client, via: opened, presented };
}

/**
 * The address to connect the first hop to: its host resolved once (a literal address as it is),
 * every address checked against the allowance. Fails with AddressNotAllowedError, or with
 * ClusterUnreachableError when the name does not resolve within the connect timeout.
 */
async function firstHopAddress(hop: Hop, settings: ChainSettings): Promise<string> {
  const allowance = compileAllowance(settings.allowHosts ?? []);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new ClusterUnreachableError(hop.label, `host name does not resolve within the connect timeout (${settings.connectTimeoutMs} ms)`)),
      settings.connectTimeoutMs,
    );
  });
  try {
    const resolved = await Promise.race([resolveAllowed(hop.host, allowance, settings.resolve ?? systemResolver), deadline]);
    if (resolved.ok) return resolved.address.address;
    if (resolved.reason === 'address') throw new AddressNotAllowedError(hop.label, hop.host, resolved.address, resolved.cls);
    throw new ClusterUnreachableError(hop.label, `host name does not resolve (${resolved.code} ${hop.host})`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One SSH handshake and login: to an address (the first hop's, checked by firstHopAddress), or
 * inside a connection forwarded by the hop before it.
 */
class HopLogin {
  readonly done: Promise<{ client: Client; presented: string | null }>;
  private readonly client = new Client();
  /** The host key fingerprint the server showed. */
  private presented: string | null = null;
  /** The shown host key is not the pinned one: what follows (an error, a close) is a mismatch. */
  private hostKeyRejected = false;
  private settled = false;
  private resolve!: (value: { client: Client; presented: string | null }) => void;
  private reject!: (err: ErgSlurmError) => void;

  constructor(
    private readonly hop: Hop,
    target: string | Duplex,
    timing: ChainSettings,
  ) {
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    if (hop.certificateProblem) {
      this.reject(new SshAuthError(hop.label, hop.username, `cannot use the certificate for ${hop.username}@${hop.label}: ${hop.certificateProblem}`));
      return;
    }
    const client = this.client;
    client.on('ready', () => {
      if (this.settled) return;
      this.settled = true;
      this.resolve({ client, presented: this.presented });
    });
    client.on('error', (err: Error & { level?: string }) => {
      if (this.settled) return;
      if (this.hostKeyRejected) this.fail(this.mismatch());
      else if (err.level === 'client-authentication') this.fail(authError(hop, err));
      else this.fail(new ClusterUnreachableError(hop.label, describeConnectError(err), { cause: err }));
    });
    client.on('close', () => this.fail(this.hostKeyRejected ? this.mismatch() : new ClusterUnreachableError(hop.label, 'connection closed during handshake')));
    try {
      client.connect({
        ...(typeof target === 'string' ? { host: target } : { host: hop.host, sock: target }),
        port: hop.port,
        username: hop.username,
        privateKey: hop.privateKey,
        passphrase: hop.passphrase,
        // Only publickey (the certificate first, when there is one): never fall back to
        // password/keyboard prompts on a scheduler.
        authHandler: hop.certificate ? publickeyAuthHandler(hop.username, hop.privateKey, hop.certificate) : ['publickey'],
        hostVerifier: (key: Buffer) => {
          this.presented = hostKeyFingerprint(key);
          this.hostKeyRejected = hop.pin !== null && !fingerprintsEqual(hop.pin, this.presented);
          return !this.hostKeyRejected;
        },
        readyTimeout: timing.connectTimeoutMs,
        keepaliveInterval: timing.keepaliveIntervalMs,
        keepaliveCountMax: timing.keepaliveCountMax,
      });
      if (hop.certificate) installCertificateAuth(client);
    } catch (err) {
      // ssh2 throws synchronously for an unusable private key: a configuration error.
      this.fail(new SshAuthError(hop.label, hop.username, `cannot use the private key for ${hop.username}@${hop.label}: ${(err as Error).message}`, { cause: err }));
    }
  }

  private mismatch(): HostKeyMismatchError {
    return new HostKeyMismatchError(this.hop.label, this.hop.pin ?? '(none)', this.presented ?? '(none)', this.hop.pinField);
  }

  private fail(err: ErgSlurmError): void {
    if (this.settled) return;
    this.settled = true;
    this.client.end();
    this.reject(err);
  }
}

function authError(hop: Hop, err: Error): SshAuthError {
  const where = hop.host;
  if (hop.certificate) {
    const c = hop.certificate;
    return new SshAuthError(
      hop.label,
      hop.username,
      `authentication as ${hop.username} at ${hop.label} failed with the certificate (key id ${JSON.stringify(c.keyId)}, serial ${c.serial}, ` +
        `principals ${c.principals.join(',') || '(any)'}, signed by ${c.signingKeySha256}) and with the plain key: check that ${where} trusts that CA ` +
        `(TrustedUserCAKeys) and that a principal matches ${hop.username}, or that the key is in ${hop.username}'s ~/.ssh/authorized_keys there`,
      { cause: err },
    );
  }
  if (hop.isJumpHost) {
    return new SshAuthError(hop.label, hop.username, `authentication as ${hop.username} at ${hop.label} failed: check that the jump host's key is in ${hop.username}'s ~/.ssh/authorized_keys on ${where}`, { cause: err });
  }
  return new SshAuthError(hop.label, hop.username, undefined, { cause: err });
}

/** Asks `via` (connected) to open a TCP connection to `next`, for the next hop's SSH to run inside. */
function forward(via: Client, hop: Hop, next: Hop, timeoutMs: number): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      via.removeListener('close', onClose);
      fn();
    };
    const timer = setTimeout(
      () => settle(() => reject(new ClusterUnreachableError(next.label, `${hop.label} did not open a forwarded connection to it within ${timeoutMs} ms`))),
      timeoutMs,
    );
    const onClose = () => settle(() => reject(new ClusterUnreachableError(next.label, `${hop.label} closed the connection while forwarding to it`)));
    via.once('close', onClose);
    via.forwardOut('127.0.0.1', 0, next.host, next.port, (err, stream) => {
      if (err) {
        settle(() =>
          reject(
            new ClusterUnreachableError(
              next.label,
              `${hop.label} refused to forward a connection to it (${err.message}): the jump host must allow TCP forwarding there (sshd: AllowTcpForwarding, PermitOpen)`,
              { cause: err },
            ),
          ),
        );
        return;
      }
      settle(() => resolve(stream));
    });
  });
}

function describeConnectError(err: Error & { level?: string; code?: string }): string {
  if (err.level === 'client-timeout') return `no SSH handshake within the connect timeout (${err.message})`;
  if (err.code === 'ECONNREFUSED') return 'connection refused (is sshd running on that port?)';
  if (err.code === 'ENOTFOUND' || err.level === 'client-dns') return `host name does not resolve (${err.message})`;
  return err.message;
}
