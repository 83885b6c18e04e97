/**
 * The error catalog of @erg/slurm: every error this package throws has a stable `code` and says
 * whether retrying the same operation later can succeed (`retryable`). The scheduler shows
 * `message` as a run's pending reason, so each message names the thing at fault and what to do.
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
 * | ERG_SSH_AUTH                        | SshAuthError               | no        |
 * | ERG_SSH_CONNECTION_LOST             | ConnectionLostError        | yes       |
 * | ERG_SSH_CHANNEL_REFUSED             | ChannelOpenError           | yes       |
 * | ERG_SSH_CHANNEL_FAILED              | ChannelError               | yes       |
 * | ERG_SSH_TIMEOUT                     | SshTimeoutError            | yes       |
 * | ERG_SSH_OUTPUT_TOO_LARGE            | OutputTooLargeError        | no        |
 * | ERG_SSH_SFTP                        | SftpError                  | no        |
 * | ERG_SSH_CLOSED                      | ConnectionClosedError      | no        |
 * | ERG_SSH_READ_FAILED                 | JobFileReadError           | yes       |
 * | ERG_JOB_FILE_REFUSED                | JobFileRefusedError        | no        |
 *
 * ERG_JOB_FILE_REFUSED is the one error here a *job* causes (its run directory holds something
 * erg will not read); callers turn it into that run's failure, never into the cluster's.
 */

/** Base class: every error of this package carries a code and a retry verdict. */
export abstract class ErgSlurmError extends Error {
  abstract readonly code: string;
  abstract readonly retryable: boolean;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A value bound for an `#SBATCH` line failed the renderer's own check (defence in depth). */
export class UnsafeDirectiveValueError extends ErgSlurmError {
  readonly code = 'ERG_SLURM_UNSAFE_DIRECTIVE_VALUE';
  readonly retryable = false;
  constructor(
    readonly directive: string,
    readonly value: string,
  ) {
    super(
      `refusing to write ${JSON.stringify(value)} into "#SBATCH ${directive}": directive values may not ` +
        `contain whitespace, quotes, '$', '\`', ';' or '#' (sbatch parses these lines itself); fix the ` +
        `campaign's resources/slurm settings`,
    );
  }
}

/** A parameter value is outside SAFE_VALUE and so may not be substituted into run.sh or files. */
export class UnsafeParameterValueError extends ErgSlurmError {
  readonly code = 'ERG_SLURM_UNSAFE_PARAMETER_VALUE';
  readonly retryable = false;
  constructor(
    readonly parameter: string,
    readonly value: string,
  ) {
    super(
      `parameter "${parameter}" has value ${JSON.stringify(value)}, which is not allowed in a rendered ` +
        `script: values may only use letters, digits and . _ , : = + / @ % ^ - (1 to 256 characters)`,
    );
  }
}

/** Something other than a value is malformed: a run dir, a file name, a parameter name, an option key. */
export class InvalidRenderInputError extends ErgSlurmError {
  readonly code = 'ERG_SLURM_INVALID_RENDER_INPUT';
  readonly retryable = false;
  constructor(
    readonly field: string,
    detail: string,
  ) {
    super(`cannot render run files: ${field} ${detail}`);
  }
}

/** A string with a NUL byte cannot be passed through a shell: the argument would be cut short. */
export class UnquotableValueError extends ErgSlurmError {
  readonly code = 'ERG_SLURM_UNQUOTABLE_VALUE';
  readonly retryable = false;
  constructor() {
    super('cannot shell-quote a string that contains a NUL byte');
  }
}

/** A command builder was given an argument it will not put on a command line (bad job id, path). */
export class InvalidCommandInputError extends ErgSlurmError {
  readonly code = 'ERG_SLURM_INVALID_COMMAND_INPUT';
  readonly retryable = false;
  constructor(
    readonly field: string,
    detail: string,
  ) {
    super(`cannot build Slurm command: ${field} ${detail}`);
  }
}

/** Output of sbatch/squeue/sacct did not have the shape erg asked for. */
export class SlurmParseError extends ErgSlurmError {
  readonly code = 'ERG_SLURM_PARSE';
  readonly retryable = false;
  constructor(
    readonly what: string,
    readonly input: string,
    detail: string,
  ) {
    super(`cannot parse ${what} output (${detail}): ${JSON.stringify(input.slice(0, 200))}`);
  }
}

/**
 * A Slurm command exited non-zero. Retryable: the usual cause is a busy or restarting slurmctld
 * ("Unable to contact slurm controller"), which passes.
 */
export class SlurmCommandError extends ErgSlurmError {
  readonly code = 'ERG_SLURM_COMMAND_FAILED';
  readonly retryable = true;
  constructor(
    readonly command: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`${command} failed (exit ${exitCode ?? 'signal'}): ${stderr.trim().slice(0, 500) || '(no stderr)'}`);
  }
}

/** The server presented a host key other than the pinned one: possibly a man in the middle. */
export class HostKeyMismatchError extends ErgSlurmError {
  readonly code = 'ERG_SSH_HOST_KEY_MISMATCH';
  readonly retryable = false;
  constructor(
    readonly hostPort: string,
    readonly expected: string,
    readonly actual: string,
  ) {
    super(
      `host key of ${hostPort} does not match: expected ${expected}, got ${actual}. erg refused to connect. ` +
        `If the cluster's host key really changed, confirm the new fingerprint with the cluster admins ` +
        `(ssh-keyscan -p <port> <host> | ssh-keygen -lf -) and update the cluster's hostKeySha256.`,
    );
  }
}

/** TCP refused, DNS failure, network timeout, handshake failure: the cluster may come back. */
export class ClusterUnreachableError extends ErgSlurmError {
  readonly code = 'ERG_SSH_UNREACHABLE';
  readonly retryable = true;
  constructor(
    readonly hostPort: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot reach ${hostPort}: ${detail}`, options);
  }
}

/** The server rejected the key, or the key is unusable: retrying will not help until someone fixes it. */
export class SshAuthError extends ErgSlurmError {
  readonly code = 'ERG_SSH_AUTH';
  readonly retryable = false;
  constructor(
    readonly hostPort: string,
    readonly username: string,
    detail?: string,
    options?: { cause?: unknown },
  ) {
    super(
      detail ??
        `authentication as ${username} at ${hostPort} failed: check that the cluster's private key is in ` +
          `${username}'s ~/.ssh/authorized_keys on ${hostPort.replace(/:\d+$/, '')}`,
      options,
    );
  }
}

/** The connection dropped while an operation was in flight; the next call reconnects. */
export class ConnectionLostError extends ErgSlurmError {
  readonly code = 'ERG_SSH_CONNECTION_LOST';
  readonly retryable = true;
  constructor(
    readonly hostPort: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`connection to ${hostPort} lost: ${detail}`, options);
  }
}

/** The server refused to open a channel (session limit, resource shortage). */
export class ChannelOpenError extends ErgSlurmError {
  readonly code = 'ERG_SSH_CHANNEL_REFUSED';
  readonly retryable = true;
  constructor(
    readonly hostPort: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${hostPort} refused to open an SSH channel: ${detail}`, options);
  }
}

/** An open channel failed mid-command; the command's outcome is unknown. */
export class ChannelError extends ErgSlurmError {
  readonly code = 'ERG_SSH_CHANNEL_FAILED';
  readonly retryable = true;
  constructor(
    readonly hostPort: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`SSH channel to ${hostPort} failed mid-command (outcome unknown): ${detail}`, options);
  }
}

/**
 * A remote command ran past its deadline and was abandoned. Retryable, but the command may have
 * had its effect (an sbatch may have submitted): callers of non-idempotent commands must look
 * before they retry.
 */
export class SshTimeoutError extends ErgSlurmError {
  readonly code = 'ERG_SSH_TIMEOUT';
  readonly retryable = true;
  constructor(
    readonly hostPort: string,
    readonly timeoutMs: number,
    readonly command: string,
  ) {
    super(`command on ${hostPort} did not finish within ${timeoutMs} ms: ${command.slice(0, 200)}`);
  }
}

/** A remote command printed more than the caller's limit; the channel was closed. */
export class OutputTooLargeError extends ErgSlurmError {
  readonly code = 'ERG_SSH_OUTPUT_TOO_LARGE';
  readonly retryable = false;
  constructor(
    readonly hostPort: string,
    readonly maxOutputBytes: number,
    readonly command: string,
  ) {
    super(`command on ${hostPort} printed more than ${maxOutputBytes} bytes: ${command.slice(0, 200)}`);
  }
}

/** An SFTP request failed for a reason other than a missing file (permissions, disk full). */
export class SftpError extends ErgSlurmError {
  readonly code = 'ERG_SSH_SFTP';
  readonly retryable = false;
  constructor(
    readonly hostPort: string,
    readonly operation: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    const detail = options?.cause instanceof Error ? options.cause.message : String(options?.cause ?? 'failed');
    super(`SFTP ${operation} ${path} on ${hostPort} failed: ${detail}`, options);
  }
}

/** The connection was closed by its owner; no further operations are accepted. */
export class ConnectionClosedError extends ErgSlurmError {
  readonly code = 'ERG_SSH_CLOSED';
  readonly retryable = false;
  constructor(readonly hostPort: string) {
    super(`connection to ${hostPort} was closed by erg`);
  }
}

/**
 * Reading a file of a run directory failed on the remote side for a reason that is not the
 * file's (a missing tool, an I/O error of the login node): the next cycle tries again.
 */
export class JobFileReadError extends ErgSlurmError {
  readonly code = 'ERG_SSH_READ_FAILED';
  readonly retryable = true;
  constructor(
    readonly hostPort: string,
    readonly path: string,
    detail: string,
  ) {
    super(`reading ${path} on ${hostPort} failed: ${detail}`);
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
export class JobFileRefusedError extends ErgSlurmError {
  readonly code = 'ERG_JOB_FILE_REFUSED';
  readonly retryable = false;
  constructor(
    /** The file as the run's owner knows it, relative to the run directory (`stdout.log`). */
    readonly file: string,
    readonly reason: JobFileRefusalReason,
    message: string,
  ) {
    super(message);
  }
}
