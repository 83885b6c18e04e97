/**
 * CollectedCommand: one `exec` call — a command whose stdout and stderr are collected whole,
 * under a deadline and an output limit. Past either, the command is abandoned: killed where sshd
 * allows, its channel closed, and the call failed (SshTimeoutError, OutputTooLargeError).
 */
import type { ClientChannel } from 'ssh2';
import { OutputTooLargeError, SshTimeoutError, type ErgSlurmError } from './errors';
import { exitStatusOf, killChannel } from './exec-channel';
import type { Session } from './session';

export interface ExecOptions {
  /** Written to the command's stdin, which is then closed (stdin is always closed). */
  stdin?: string | Buffer;
  /** Deadline (ms); on expiry the channel is closed and SshTimeoutError raised. */
  timeoutMs?: number;
  /** Limit on stdout + stderr bytes; beyond it the channel is closed and OutputTooLargeError raised. */
  maxOutputBytes?: number;
}

export interface ExecResult {
  /** Exit status, null when the command was killed by a signal. */
  code: number | null;
  /** Signal name (`TERM`, `KILL`) when killed by one, else null. */
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** The limits of one exec call, defaults applied. */
export interface CollectLimits {
  timeoutMs: number;
  maxOutputBytes: number;
  stdin: string | Buffer | undefined;
}

/** Reads `channel` (an exec of `command`, just opened) to its close, as an operation of `session`. */
export function collectOutput(session: Session, channel: ClientChannel, command: string, limits: CollectLimits): Promise<ExecResult> {
  return session.track<ExecResult>((resolve, reject) => {
    new CollectedCommand(session, channel, command, limits, resolve, reject);
  });
}

class CollectedCommand {
  private readonly stdout: Buffer[] = [];
  private readonly stderr: Buffer[] = [];
  /** stdout + stderr bytes so far. */
  private bytes = 0;
  /** Given up (deadline, output limit, stream error): nothing more settles the call. */
  private abandoned = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly session: Session,
    private readonly stream: ClientChannel,
    private readonly command: string,
    private readonly limits: CollectLimits,
    private readonly resolve: (r: ExecResult) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    this.timer = setTimeout(() => this.abandon(new SshTimeoutError(session.hostPort, limits.timeoutMs, command)), limits.timeoutMs);
    // A stream error (e.g. a write after the server closed the channel) ends this call; the
    // channel's close still follows and returns the permit.
    stream.on('error', (err: Error) => {
      if (this.abandoned) return;
      this.abandoned = true;
      clearTimeout(this.timer);
      reject(session.channelFailure(err));
    });
    stream.on('data', (chunk: Buffer) => this.received(this.stdout, chunk));
    stream.stderr.on('data', (chunk: Buffer) => this.received(this.stderr, chunk));
    stream.on('close', () => this.closed());
    // Always send EOF: a command that reads stdin must not wait forever.
    stream.end(limits.stdin);
  }

  private received(sink: Buffer[], chunk: Buffer): void {
    if (this.abandoned) return;
    this.bytes += chunk.length;
    if (this.bytes > this.limits.maxOutputBytes) {
      this.abandon(new OutputTooLargeError(this.session.hostPort, this.limits.maxOutputBytes, this.command));
      return;
    }
    sink.push(chunk);
  }

  private closed(): void {
    clearTimeout(this.timer);
    const exit = exitStatusOf(this.stream);
    if (this.abandoned) return;
    if (!exit && !this.session.alive) {
      this.reject(this.session.endError('channel closed'));
      return;
    }
    this.resolve({
      code: exit?.code ?? null,
      signal: exit?.signal ?? null,
      stdout: Buffer.concat(this.stdout).toString('utf8'),
      stderr: Buffer.concat(this.stderr).toString('utf8'),
    });
  }

  private abandon(err: ErgSlurmError): void {
    this.abandoned = true;
    clearTimeout(this.timer);
    killChannel(this.stream);
    this.reject(err);
  }
}
