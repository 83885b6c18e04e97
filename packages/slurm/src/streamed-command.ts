/**
 * StreamedCommand: one `execStream` call — a command whose stdout is handed over as a stream as
 * it arrives, for output of any size (job logs), under SSH flow control and a deadline over the
 * whole command, reading included.
 *
 * The state of one call: the channel, its deadline, and how it ended. Exactly one of "closed by
 * the server" and "given up" (timeout, connection lost, cancel) happens; both settle `done` and
 * finish `stdout`.
 */
import { Readable } from 'node:stream';
import type { ClientChannel } from 'ssh2';
import { SshTimeoutError, type ErgSlurmError } from './errors';
import { exitStatusOf, killChannel, type ExitStatus } from './exec-channel';
import type { Session } from './session';

export interface ExecStreamOptions {
  /**
   * Deadline of the whole command, reading included (ms); on expiry the command is killed where
   * sshd allows, the channel closed, and `stdout` fails with SshTimeoutError. Default: execTimeoutMs.
   */
  timeoutMs?: number;
  /** Bytes of stderr kept for `done`; the rest is read and dropped, never an error. Default 64 KiB. */
  maxStderrBytes?: number;
}

/** How a streamed command ended. */
export interface ExecExit {
  /** Exit status, null when the command was killed by a signal. */
  code: number | null;
  /** The signal that ended the command, as ssh2 names it (`SIGKILL`), else null. */
  signal: string | null;
  /** The first `maxStderrBytes` of stderr. */
  stderr: string;
}

/** A command whose stdout is read as it arrives (see ClusterConnection.execStream). */
export interface ExecStream {
  /**
   * The command's stdout. A reader that stops reading stops the sender (SSH flow control: the
   * channel's window is not renewed), so memory stays bounded by the window, not by the output.
   */
  readonly stdout: Readable;
  /**
   * Settles once the channel has closed, with the exit status; rejects with the stream's failure
   * (SshTimeoutError, ConnectionLostError, or an Error after cancel()). Awaiting it is optional.
   */
  readonly done: Promise<ExecExit>;
  /** Stops the command (kills it where sshd allows) and closes the channel; idempotent. */
  cancel(): void;
}

export class StreamedCommand implements ExecStream {
  readonly stdout: Readable;
  readonly done: Promise<ExecExit>;
  private settled = false;
  private exit: ExitStatus | null = null;
  private readonly stderr: Buffer[] = [];
  private stderrBytes = 0;
  private readonly timer: NodeJS.Timeout;
  private resolveDone!: (exit: ExecExit) => void;
  private rejectDone!: (err: unknown) => void;
  private readonly onSessionEnd = (err: ErgSlurmError) => this.giveUp(err);

  constructor(
    private readonly session: Session,
    private readonly channel: ClientChannel,
    command: string,
    timeoutMs: number,
    private readonly maxStderrBytes: number,
    /** Called once, when the command has settled (the connection counts the stream as a user until then). */
    private readonly onSettled: () => void = () => undefined,
  ) {
    this.done = new Promise<ExecExit>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    // A caller that cancels, or fails on stdout, need not await `done` as well.
    this.done.catch(() => undefined);
    this.stdout = new Readable({
      highWaterMark: 64 * 1024,
      // Resuming the channel lets ssh2 renew the window, so the server sends more.
      read: () => void channel.resume(),
      // Destroyed before its end: the reader stopped early (or failed), so stop the command too.
      // After the end (Readable destroys itself then) the channel's own close is on its way.
      destroy: (err, cb) => {
        if (err || !this.stdout.readableEnded) this.abandon(err ?? new Error('the reader stopped reading'));
        cb(err);
      },
    });
    channel.on('data', (chunk: Buffer) => {
      if (this.settled) return; // given up: drained and dropped (see abandon)
      if (!this.stdout.push(chunk)) channel.pause();
    });
    channel.on('end', () => this.stdout.push(null));
    channel.stderr.on('data', (chunk: Buffer) => {
      const room = this.maxStderrBytes - this.stderrBytes;
      if (room <= 0) return;
      this.stderr.push(chunk.subarray(0, room));
      this.stderrBytes += Math.min(room, chunk.length);
    });
    channel.on('error', (err: Error) => this.giveUp(session.channelFailure(err)));
    channel.on('close', () => this.closed());
    const hostPort = session.hostPort;
    this.timer = setTimeout(() => this.giveUp(new SshTimeoutError(hostPort, timeoutMs, command)), timeoutMs);
    session.watchEnd(this.onSessionEnd);
    // stdin is closed at once: a command that reads it must not wait forever.
    channel.end();
  }

  cancel(): void {
    this.abandon(new Error('cancelled by the reader'));
    this.stdout.destroy();
  }

  private closed(): void {
    if (this.settled) return;
    this.exit = exitStatusOf(this.channel) ?? null;
    if (!this.exit && !this.session.alive) {
      this.giveUp(this.session.endError('channel closed'));
      return;
    }
    this.finish();
    // The server may close without an EOF first; the reader must still see the end.
    this.stdout.push(null);
    this.resolveDone({ ...(this.exit ?? { code: null, signal: null }), stderr: Buffer.concat(this.stderr).toString('utf8') });
  }

  /** Ends the command from this side and fails `stdout` and `done` with `err`. */
  private giveUp(err: unknown): void {
    if (this.settled) return;
    this.abandon(err);
    this.stdout.destroy(err instanceof Error ? err : new Error(String(err)));
  }

  /** Kills the command and closes the channel; `done` fails with `err`. */
  private abandon(err: unknown): void {
    if (this.settled) return;
    this.finish();
    // Signals are best effort (see killChannel); remote commands bound themselves with `timeout`.
    killChannel(this.channel);
    // ssh2 emits the channel's 'close' (which returns the permit) only after its buffered data
    // has been read: drain it into the void.
    this.channel.resume();
    this.rejectDone(err);
  }

  private finish(): void {
    this.settled = true;
    clearTimeout(this.timer);
    this.session.unwatchEnd(this.onSessionEnd);
    this.onSettled();
  }
}
