import type { AddressClass } from '@erg/address-policy';
import { ErgError } from '@erg/spec';

/**
 * The errors of @erg/slurm: every one has a stable `code` of erg's error catalog
 * (packages/spec/src/errors.ts), which also says its HTTP status and whether retrying the same
 * operation later can succeed (`retryable`). The scheduler shows `message` as a run's pending
 * reason, so each message names the thing at fault and what to do.
 *
 * | code                                | class                      | retryable |
 * | ----------------------------------- | -------------------------- | --------- |
 * | ERG_SLURM_UNSAFE_DIRECTIVE_VALUE    | UnsafeDirectiveValueError  | no        |
 * | ERG_SLURM_UNSAFE_PARAMETER_VALUE    | UnsafeParameterValueError  | no        |
 * | ERG_SLURM_INVALID_RENDER_INPUT      | InvalidRenderInputError    | no        |
 * | ERG_SLURM_UNQUOTABLE_VALUE          | UnquotableValueError       | no        |
 * | ERG_SLURM_INVALID_COMMAND_INPUT     | InvalidCommandInputError   | no        |
 * | ERG_SLURM_PARSE                     | SlurmParseError            | no        |
 * | ERG_SLURM_COMMAND_FAILED            | SlurmCommandError          | yes       |
 * | ERG_SSH_HOST_KEY_MISMATCH           | HostKeyMismatchError       | no        |
 * | ERG_SSH_UNREACHABLE                 | ClusterUnreachableError    | yes       |
 * | ERG_SSH_ADDRESS_NOT_ALLOWED         | AddressNotAllowedError     | no        |
 * | ERG_SSH_AUTH                        | SshAuthError               | no        |
 * | ERG_SSH_CONNECTION_LOST             | ConnectionLostError        | yes       |
 * | ERG_SSH_CHANNEL_REFUSED             | ChannelOpenError           | yes       |
 * | ERG_SSH_CHANNEL_FAILED              | ChannelError               | yes       |
 * | ERG_SSH_TIMEOUT                     | SshTimeoutError            | yes       |
 * | ERG_SSH_OUTPUT_TOO_LARGE            | OutputTooLargeError        | no        |
 * | ERG_SSH_SFTP                        | SftpError                  | no        |
 * | ERG_SSH_CLOSED                      | ConnectionClosedError      | no        |
 * | ERG_SSH_READ_FAILED                 | JobFileReadError           | yes       |
 * | ERG_SSH_CERTIFICATE_EXPIRED         | CertificateExpiredError    | no        |
 * | ERG_JOB_FILE_REFUSED                | JobFileRefusedError        | no        |
 *
 * The ERG_SSH_* ones are SshError: the connection's failures, which the scheduler counts by kind.
 * ERG_JOB_FILE_REFUSED is the one error here a *job* causes (its run directory holds something
 * erg will not read); callers turn it into that run's failure, never into the cluster's.
 */

/** The codes of this package's errors. */
export type SlurmErrorCode =
  | 'ERG_SLURM_UNSAFE_DIRECTIVE_VALUE' | 'ERG_SLURM_UNSAFE_PARAMETER_VALUE' | 'ERG_SLURM_INVALID_RENDER_INPUT' | 'ERG_SLURM_UNQUOTABLE_VALUE'
  | 'ERG_SLURM_INVALID_COMMAND_INPUT' | 'ERG_SLURM_PARSE' | 'ERG_SLURM_COMMAND_FAILED' | SshErrorCode | 'ERG_JOB_FILE_REFUSED';

/** The codes of the SSH connection's failures (SshError). */
export type SshErrorCode =
  | 'ERG_SSH_HOST_KEY_MISMATCH' | 'ERG_SSH_UNREACHABLE' | 'ERG_SSH_AUTH' | 'ERG_SSH_CONNECTION_LOST' | 'ERG_SSH_CHANNEL_REFUSED'
  | 'ERG_SSH_CHANNEL_FAILED' | 'ERG_SSH_TIMEOUT' | 'ERG_SSH_OUTPUT_TOO_LARGE' | 'ERG_SSH_SFTP' | 'ERG_SSH_CLOSED' | 'ERG_SSH_READ_FAILED'
  | 'ERG_SSH_CERTIFICATE_EXPIRED' | 'ERG_SSH_ADDRESS_NOT_ALLOWED';

/** Base class: every error of this package; its code's catalog entry gives its status and retry verdict. */
export abstract class ErgSlurmError<C extends SlurmErrorCode = SlurmErrorCode> extends ErgError<C> {}

/** A failure of the SSH connection to a cluster (or of a command or file transfer over it). */
export abstract class SshError<C extends SshErrorCode = SshErrorCode> extends ErgSlurmError<C> {}

/** A value bound for an `#SBATCH` line failed the renderer's own check (defence in depth). */
export class UnsafeDirectiveValueError extends ErgSlurmError<'ERG_SLURM_UNSAFE_DIRECTIVE_VALUE'> {
  constructor(
    readonly directive: string,
    readonly value: string,
  ) {
    super(
      'ERG_SLURM_UNSAFE_DIRECTIVE_VALUE',
      `refusing to write ${JSON.stringify(value)} into "#SBATCH ${directive}": directive values may not ` +
        `contain whitespace, quotes, '$', '\`', ';' or '#' (sbatch parses these lines itself); fix the ` +
        `campaign's resources/slurm settings`,
    );
  }
}

/** A parameter value is outside SAFE_VALUE and so may not be substituted into run.sh or files. */
export class UnsafeParameterValueError extends ErgSlurmError<'ERG_SLURM_UNSAFE_PARAMETER_VALUE'> {
  constructor(
    readonly parameter: string,
    readonly value: string,
  ) {
    super(
      'ERG_SLURM_UNSAFE_PARAMETER_VALUE',
      `parameter "${parameter}" has value ${JSON.stringify(value)}, which is not allowed in a rendered ` +
        `script: values may only use letters, digits and . _ , : = + / @ % ^ - (1 to 256 characters)`,
    );
  }
}

/** Something other than a value is malformed: a run dir, a file name, a parameter name, an option key. */
export class InvalidRenderInputError extends ErgSlurmError<'ERG_SLURM_INVALID_RENDER_INPUT'> {
  constructor(
    readonly field: string,
    detail: string,
  ) {
    super('ERG_SLURM_INVALID_RENDER_INPUT', `cannot render run files: ${field} ${detail}`);
  }
}

/** A string with a NUL byte cannot be passed through a shell: the argument would be cut short. */
export class UnquotableValueError extends ErgSlurmError<'ERG_SLURM_UNQUOTABLE_VALUE'> {
  constructor() {
    super('ERG_SLURM_UNQUOTABLE_VALUE', 'cannot shell-quote a string that contains a NUL byte');
  }
}

/** A command builder was given an argument it will not put on a command line (bad job id, path). */
export class InvalidCommandInputError extends ErgSlurmError<'ERG_SLURM_INVALID_COMMAND_INPUT'> {
  constructor(
    readonly field: string,
    detail: string,
  ) {
    super('ERG_SLURM_INVALID_COMMAND_INPUT', `cannot build Slurm command: ${field} ${detail}`);
  }
}

/** Output of sbatch/squeue/sacct did not have the shape erg asked for. */
export class SlurmParseError extends ErgSlurmError<'ERG_SLURM_PARSE'> {
  constructor(
    readonly what: string,
    readonly input: string,
    detail: string,
  ) {
    super('ERG_SLURM_PARSE', `cannot parse ${what} output (${detail}): ${JSON.stringify(input.slice(0, 200))}`);
  }
}

/**
 * A Slurm command exited non-zero. Retryable: the usual cause is a busy or restarting slurmctld
 * ("Unable to contact slurm controller"), which passes.
 */
export class SlurmCommandError extends ErgSlurmError<'ERG_SLURM_COMMAND_FAILED'> {
  constructor(
    readonly command: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super('ERG_SLURM_COMMAND_FAILED', `${command} failed (exit ${exitCode ?? 'signal'}): ${stderr.trim().slice(0, 500) || '(no stderr)'}`);
  }
}

/**
 * The server presented a host key other than the pinned one: possibly a man in the middle.
 * `hostPort` names the hop: the login node (`login.example.org:22`) or a jump host in front of it
 * (`jump host bastion.example.org:22`); `field` is the cluster setting that pins it.
 */
export class HostKeyMismatchError extends SshError<'ERG_SSH_HOST_KEY_MISMATCH'> {
  constructor(
    readonly hostPort: string,
    readonly expected: string,
    readonly actual: string,
    readonly field: string = 'hostKeySha256',
  ) {
    super(
      'ERG_SSH_HOST_KEY_MISMATCH',
      `host key of ${hostPort} does not match: expected ${expected}, got ${actual}. erg refused to connect. ` +
        `If the host key really changed, confirm the new fingerprint with the cluster admins ` +
        `(ssh-keyscan -p <port> <host> | ssh-keygen -lf -) and update the cluster's ${field}.`,
    );
  }
}

/**
 * The OpenSSH certificate erg would log in with has expired: erg does not try to connect (the
 * server would refuse it, and a login node's fail2ban counts refusals). Lasts until someone
 * rotates the certificate (PUT /v1/clusters/:name/credentials).
 */
export class CertificateExpiredError extends SshError<'ERG_SSH_CERTIFICATE_EXPIRED'> {
  constructor(
    /** Whose certificate: `erg@login.example.org:22`, or `erg@bastion.example.org:22 (jump host 1)`. */
    readonly hop: string,
    readonly validBefore: Date,
    /** What to run to rotate it. */
    readonly rotate: string,
  ) {
    super(
      'ERG_SSH_CERTIFICATE_EXPIRED',
      `certificate expired (the certificate for ${hop} was valid until ${validBefore.toISOString()}); rotate it: ${rotate}`,
    );
  }
}

/** TCP refused, DNS failure, network timeout, handshake failure: the cluster may come back. */
export class ClusterUnreachableError extends SshError<'ERG_SSH_UNREACHABLE'> {
  constructor(
    readonly hostPort: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super('ERG_SSH_UNREACHABLE', `cannot reach ${hostPort}: ${detail}`, options);
  }
}

/**
 * The first hop (the login node, or the first jump host) is, or resolves to, an internal address
 * (loopback, private, link-local, … — @erg/address-policy) that the project's cluster policy does
 * not allow: erg did not connect at all. Lasts until an admin allows the host or someone points
 * the cluster elsewhere.
 */
export class AddressNotAllowedError extends SshError<'ERG_SSH_ADDRESS_NOT_ALLOWED'> {
  constructor(
    /** How messages name the hop: `login.example.org:22`, `jump host bastion.example.org:22`. */
    readonly hop: string,
    /** The host as configured. */
    readonly host: string,
    /** The address refused: the host itself when it is one, else one the host resolved to. */
    readonly address: string,
    readonly addressClass: AddressClass,
  ) {
    super(
      'ERG_SSH_ADDRESS_NOT_ALLOWED',
      `not connecting to ${hop}: ${address === host ? `${host} is` : `${host} resolves to ${address},`} a ${addressClass} address, inside erg's own network; ` +
        `an admin allows it in the cluster's project's cluster policy: erg clusters policy --project NAME --allow ${address} (PUT /v1/projects/{name}/cluster-policy)`,
    );
  }
}

/** The server rejected the key, or the key is unusable: retrying will not help until someone fixes it. */
export class SshAuthError extends SshError<'ERG_SSH_AUTH'> {
  constructor(
    readonly hostPort: string,
    readonly username: string,
    detail?: string,
    options?: { cause?: unknown },
  ) {
    super(
      'ERG_SSH_AUTH',
      detail ??
        `authentication as ${username} at ${hostPort} failed: check that the cluster's private key is in ` +
          `${username}'s ~/.ssh/authorized_keys on ${hostPort.replace(/:\d+$/, '')}`,
      options,
    );
  }
}

/** The connection dropped while an operation was in flight; the next call reconnects. */
export class ConnectionLostError extends SshError<'ERG_SSH_CONNECTION_LOST'> {
  constructor(
    readonly hostPort: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super('ERG_SSH_CONNECTION_LOST', `connection to ${hostPort} lost: ${detail}`, options);
  }
}

/** The server refused to open a channel (session limit, resource shortage). */
export class ChannelOpenError extends SshError<'ERG_SSH_CHANNEL_REFUSED'> {
  constructor(
    readonly hostPort: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super('ERG_SSH_CHANNEL_REFUSED', `${hostPort} refused to open an SSH channel: ${detail}`, options);
  }
}

/** An open channel failed mid-command; the command's outcome is unknown. */
export class ChannelError extends SshError<'ERG_SSH_CHANNEL_FAILED'> {
  constructor(
    readonly hostPort: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super('ERG_SSH_CHANNEL_FAILED', `SSH channel to ${hostPort} failed mid-command (outcome unknown): ${detail}`, options);
  }
}

/**
 * A remote command ran past its deadline and was abandoned. Retryable, but the command may have
 * had its effect (an sbatch may have submitted): callers of non-idempotent commands must look
 * before they retry.
 */
export class SshTimeoutError extends SshError<'ERG_SSH_TIMEOUT'> {
  constructor(
    readonly hostPort: string,
    readonly timeoutMs: number,
    readonly command: string,
  ) {
    super('ERG_SSH_TIMEOUT', `command on ${hostPort} did not finish within ${timeoutMs} ms: ${command.slice(0, 200)}`);
  }
}

/** A remote command printed more than the caller's limit; the channel was closed. */
export class OutputTooLargeError extends SshError<'ERG_SSH_OUTPUT_TOO_LARGE'> {
  constructor(
    readonly hostPort: string,
    readonly maxOutputBytes: number,
    readonly command: string,
  ) {
    super('ERG_SSH_OUTPUT_TOO_LARGE', `command on ${hostPort} printed more than ${maxOutputBytes} bytes: ${command.slice(0, 200)}`);
  }
}

/** An SFTP request failed for a reason other than a missing file (permissions, disk full). */
export class SftpError extends SshError<'ERG_SSH_SFTP'> {
  constructor(
    readonly hostPort: string,
    readonly operation: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    const detail = options?.cause instanceof Error ? options.cause.message : String(options?.cause ?? 'failed');
    super('ERG_SSH_SFTP', `SFTP ${operation} ${path} on ${hostPort} failed: ${detail}`, options);
  }
}

/** The connection was closed by its owner; no further operations are accepted. */
export class ConnectionClosedError extends SshError<'ERG_SSH_CLOSED'> {
  constructor(readonly hostPort: string) {
    super('ERG_SSH_CLOSED', `connection to ${hostPort} was closed by erg`);
  }
}

/**
 * Reading a file of a run directory failed on the remote side for a reason that is not the
 * file's (a missing tool, an I/O error of the login node): the next cycle tries again.
 */
export class JobFileReadError extends SshError<'ERG_SSH_READ_FAILED'> {
  constructor(
    readonly hostPort: string,
    readonly path: string,
    detail: string,
  ) {
    super('ERG_SSH_READ_FAILED', `reading ${path} on ${hostPort} failed: ${detail}`);
  }
}

/** Why erg will not read a file a job controls (see job-files.ts). */
export type JobFileRefusalReason =
  /** A directory, FIFO, socket, device or symbolic link where a regular file belongs. */
  | 'not-regular'
  /** A regular file that is mostly holes (e.g. `truncate -s 1T`). */
  | 'sparse'
  /** A directory on the way to the file, inside the run directory, is a symbolic link. */
  | 'link-in-path'
  /** The file cannot be examined or read (no permission, or it changed between check and read). */
  | 'unreadable';

/**
 * A file of a run directory is not something erg reads: the message names the file and what it
 * is, for the run's reason ("stdout.log is a FIFO, not a regular file; …").
 */
export class JobFileRefusedError extends ErgSlurmError<'ERG_JOB_FILE_REFUSED'> {
  constructor(
    /** The file as the run's owner knows it, relative to the run directory (`stdout.log`). */
    readonly file: string,
    readonly reason: JobFileRefusalReason,
    message: string,
  ) {
    super('ERG_JOB_FILE_REFUSED', message);
  }
}
