import {
  AddressNotAllowedError, CertificateExpiredError, ClusterUnreachableError, HostKeyMismatchError, SshAuthError, SshError, type SshErrorCode,
} from '@erg/slurm';
import { ErgError } from '@erg/spec';

/**
 * Failures to connect at all: no remote command ran, so nothing can have been submitted. An
 * expired certificate and an address the cluster policy refuses are such: erg does not even try
 * (its runs go back to pending, not to failed).
 */
export function isNothingRanError(err: unknown): boolean {
  return (
    err instanceof ClusterUnreachableError || err instanceof SshAuthError || err instanceof HostKeyMismatchError ||
    err instanceof CertificateExpiredError || err instanceof AddressNotAllowedError
  );
}

/**
 * Whether a failure is the cluster's rather than a bug: any error erg throws on purpose (an
 * ErgError — SSH, Slurm, a cluster key this process cannot open, …). A cycle records it on the
 * cluster, whose pending runs show it as their reason, and the next tick tries again; anything
 * else (a bug, the database away) throws.
 *
 * What `retryable` means here: not *whether* the next cycle tries again — every cluster failure is
 * tried again, because the fix of one that is not retryable (a key added to authorized_keys, a new
 * host key confirmed) happens outside erg and the next cycle must pick it up without a restart —
 * but whether the failure passes by itself (the cluster unreachable, slurmctld restarting, a
 * timeout) or lasts until someone changes the cluster or erg's configuration (a rejected key, a
 * changed host key, a secret that does not open). The cycle's log line says which.
 */
export function isClusterError(err: unknown): err is ErgError {
  return err instanceof ErgError;
}

/**
 * The `kind` label of the SSH error counter, one per SshError code: a fixed set, so a safe label.
 * The compiler asks for a label when @erg/slurm adds an SSH error.
 */
const SSH_ERROR_KINDS = {
  ERG_SSH_HOST_KEY_MISMATCH: 'host_key_mismatch',
  ERG_SSH_UNREACHABLE: 'unreachable',
  ERG_SSH_AUTH: 'auth',
  ERG_SSH_CONNECTION_LOST: 'connection_lost',
  ERG_SSH_CHANNEL_REFUSED: 'channel_refused',
  ERG_SSH_CHANNEL_FAILED: 'channel_failed',
  ERG_SSH_TIMEOUT: 'timeout',
  ERG_SSH_OUTPUT_TOO_LARGE: 'output_too_large',
  ERG_SSH_SFTP: 'sftp',
  ERG_SSH_CLOSED: 'closed',
  ERG_SSH_READ_FAILED: 'read_failed',
  ERG_SSH_CERTIFICATE_EXPIRED: 'certificate_expired',
  ERG_SSH_ADDRESS_NOT_ALLOWED: 'address_not_allowed',
} as const satisfies Record<SshErrorCode, string>;

/** The kind of an SSH failure for metrics (`ERG_SSH_HOST_KEY_MISMATCH` → `host_key_mismatch`); null for anything that is not one. */
export function sshErrorKind(err: unknown): string | null {
  return err instanceof SshError ? SSH_ERROR_KINDS[err.code as SshErrorCode] : null;
}
