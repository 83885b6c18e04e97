/**
 * What a ClusterConnection is configured with: where it connects (the endpoint, which
 * `reconfigure` may replace), how long it waits for what, and how it backs off. Parsed once, in
 * the constructor (resolveConnectionOptions); every other piece reads the resolved settings.
 */
import type { Resolver } from '@erg/address-policy';
import type { BackoffOptions } from '@erg/backoff';

/** One jump host (bastion) in front of the login node. */
export interface JumpHostOptions {
  host: string;
  /** Default 22. */
  port?: number;
  username: string;
  /** OpenSSH-format private key for this hop. */
  privateKey: string | Buffer;
  /** An OpenSSH user certificate of privateKey (the one line of its `-cert.pub`); offered before the plain key. */
  certificate?: string | null;
  /** Pinned host key fingerprint (`SHA256:…`); jump hosts have no trust on first use. */
  hostKeySha256: string;
}

export interface ClusterConnectionOptions {
  host: string;
  /** Default 22. */
  port?: number;
  username: string;
  /** OpenSSH-format private key. */
  privateKey: string | Buffer;
  passphrase?: string;
  /** An OpenSSH user certificate of privateKey (the one line of its `-cert.pub`); offered before the plain key. */
  certificate?: string | null;
  /**
   * Jump hosts in front of the login node, in the order erg passes them (the first is the one
   * erg reaches directly, as in `ssh -J first,second login`). Default: none.
   */
  jumpHosts?: readonly JumpHostOptions[];
  /** The cluster's name in erg, for messages that say what to run (rotating a certificate). */
  clusterName?: string;
  /**
   * Internal hosts the first hop — the login node, or the first jump host — may be: an allowance
   * (@erg/address-policy: host names, *.suffixes, IP addresses, CIDR blocks), the project's
   * cluster policy. Every connect attempt resolves the first hop's name, refuses it when any
   * address it resolves to is internal and not allowed (AddressNotAllowedError), and connects to
   * the address it checked. Default: none, public addresses only.
   */
  allowHosts?: readonly string[];
  /** Resolves the first hop's name (node's getaddrinfo by default; tests give their own). */
  resolve?: Resolver;
  /**
   * Pinned host key fingerprint, `SHA256:<base64>` as `ssh-keygen -lf` prints it. null: trust on
   * first use, only for clusters registered with that policy: the first successful connection
   * accepts the key it is shown and pins it (`hostKeySha256` then says which); every later
   * connection of this object requires that same key.
   */
  hostKeySha256: string | null;
  /** Most channels (exec + SFTP) open at once; keep under sshd's MaxSessions (10). Default 8. */
  maxSessions?: number;
  /** TCP connect + handshake + authentication deadline (ms). Default 10 000. */
  connectTimeoutMs?: number;
  /** SSH keepalive interval (ms); a dead link is noticed after ~3 intervals. Default 15 000. */
  keepaliveIntervalMs?: number;
  /** Unanswered keepalives before the connection is declared lost. Default 3. */
  keepaliveCountMax?: number;
  /** Backoff between failed connect attempts; what is not given comes from SSH_RECONNECT_BACKOFF. */
  backoff?: Partial<BackoffOptions>;
  /** Deadline of `exec` when the call gives none (ms). Default 120 000. */
  execTimeoutMs?: number;
  /** Output limit of `exec` (stdout + stderr) when the call gives none. Default 16 MiB. */
  maxOutputBytes?: number;
  /** Deadline of each SFTP request (ms); on expiry the request fails and its channel is given up. Default 30 000. */
  sftpTimeoutMs?: number;
  /**
   * How often an exec channel the server refused to open is asked for again, after 25, 50, 100 …
   * ms, before the refusal reaches the caller. Default 5 (under 1 s in all). A refused open ran
   * nothing, so asking again is safe; sshd frees a closed channel's session slot a little after
   * it confirmed the close (OpenSSH 10 under load: "no more sessions" with fewer than
   * MaxSessions open), and without this the caller would see that lag as a failure.
   */
  channelOpenRetries?: number;
}

/** The settings `reconfigure` may change: where to connect, and with what. */
export type ClusterEndpointOptions = Pick<
  ClusterConnectionOptions,
  'host' | 'port' | 'username' | 'privateKey' | 'passphrase' | 'certificate' | 'jumpHosts' | 'hostKeySha256' | 'clusterName' | 'allowHosts'
>;

/** The options with every default filled in. */
export type ResolvedConnectionOptions = Required<
  Omit<ClusterConnectionOptions, 'passphrase' | 'backoff' | 'certificate' | 'jumpHosts' | 'clusterName' | 'resolve'>
> &
  Pick<ClusterConnectionOptions, 'passphrase' | 'backoff' | 'certificate' | 'jumpHosts' | 'clusterName' | 'resolve'>;

/**
 * Reconnect delays: 250 ms doubling to 30 s, with the default (equal) jitter so that schedulers
 * restarted together do not reconnect in lockstep (and trip a login node's fail2ban or MaxStartups).
 */
export const SSH_RECONNECT_BACKOFF: BackoffOptions = { initialMs: 250, maxMs: 30_000 };

/** Where the connection stands. `backoff`: the last attempt failed; the next call tries again after `nextAttemptAt`. */
export type ConnectionState = 'idle' | 'connecting' | 'ready' | 'backoff' | 'closed';

/** Channel counters, for tests and metrics. */
export interface ChannelStats {
  open: number;
  maxOpen: number;
  waiting: number;
  /** Exec channel opens the server refused and that were asked for again (channelOpenRetries). */
  reopened: number;
}

/** The options with their defaults. */
export function resolveConnectionOptions(options: ClusterConnectionOptions): ResolvedConnectionOptions {
  return {
    port: 22,
    maxSessions: 8,
    connectTimeoutMs: 10_000,
    keepaliveIntervalMs: 15_000,
    keepaliveCountMax: 3,
    execTimeoutMs: 120_000,
    maxOutputBytes: 16 * 1024 * 1024,
    sftpTimeoutMs: 30_000,
    channelOpenRetries: 5,
    ...options,
    allowHosts: options.allowHosts ?? [],
  };
}

/** Fails at configuration time on a channel cap that is not one (the semaphore would too, later). */
export function checkMaxSessions(options: ResolvedConnectionOptions): void {
  if (!Number.isInteger(options.maxSessions) || options.maxSessions < 1) {
    throw new RangeError(`maxSessions must be a positive integer, got ${options.maxSessions}`);
  }
}

/** `options` with the endpoint replaced; a clusterName not given stays the one it was. */
export function withEndpoint(options: ResolvedConnectionOptions, endpoint: ClusterEndpointOptions): ResolvedConnectionOptions {
  return {
    ...options,
    ...endpoint,
    port: endpoint.port ?? 22,
    passphrase: endpoint.passphrase,
    certificate: endpoint.certificate,
    jumpHosts: endpoint.jumpHosts,
    clusterName: endpoint.clusterName ?? options.clusterName,
    allowHosts: endpoint.allowHosts ?? [],
  };
}

/** The login node, `host:port`, as messages name it. */
export function loginHostPort(options: Pick<ClusterConnectionOptions, 'host' | 'port'>): string {
  return `${options.host}:${options.port ?? 22}`;
}
