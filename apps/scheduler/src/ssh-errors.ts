import { ClusterUnreachableError, HostKeyMismatchError, SshAuthError } from '@erg/slurm';

/** Failures to connect at all: no remote command ran, so nothing can have been submitted. */
export function isNothingRanError(err: unknown): boolean {
  return err instanceof ClusterUnreachableError || err instanceof SshAuthError || err instanceof HostKeyMismatchError;
}

/** Errors that mean "the cluster is not reachable right now", as opposed to bugs. */
export function isClusterError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string' && (err as { code: string }).code.startsWith('ERG_');
}
