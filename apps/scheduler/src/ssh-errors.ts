import { ClusterUnreachableError, HostKeyMismatchError, SshAuthError } from '@erg/slurm';

/** Failures to connect at all: no remote command ran, so nothing can have been submitted. */
export function isNothingRanError(err: unknown): boolean {
  return err instanceof ClusterUnreachableError || err instanceof SshAuthError || err instanceof HostKeyMismatchError;
}

/** Errors that mean "the cluster is not reachable right now", as opposed to bugs. */
export function isClusterError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string' && (err as { code: string }).code.startsWith('ERG_');
}

/**
 * The kind of an SSH failure for metrics, from its stable code: `ERG_SSH_HOST_KEY_MISMATCH` →
 * `host_key_mismatch`, `ERG_SSH_UNREACHABLE` → `unreachable`, `ERG_SSH_AUTH` → `auth`, … A fixed
 * set (the codes of @erg/slurm's errors), so a safe label; null for anything that is not SSH.
 */
export function sshErrorKind(err: unknown): string | null {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('ERG_SSH_') ? code.slice('ERG_SSH_'.length).toLowerCase() : null;
}
