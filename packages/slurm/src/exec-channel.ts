/**
 * Opening an exec channel: one command's SSH channel, under a channel permit of its session,
 * asked for again when sshd refuses it, with its exit status recorded the moment ssh2 reports it;
 * and killing one that is given up.
 * What reads the channel is collected-command.ts (exec) or streamed-command.ts (execStream).
 */
import type { ClientChannel } from 'ssh2';
import { ChannelOpenError } from './errors';
import type { ChannelCounters, Session } from './session';

/** How a command ended, as ssh2 reported it: exit status, or the signal that killed it. */
export interface ExitStatus {
  code: number | null;
  signal: string | null;
}

/** The exit status of each exec channel, recorded the moment ssh2 reports it (see openCommandOnce). */
const exitStatus = new WeakMap<ClientChannel, ExitStatus>();

/** The exit status of `channel`, once ssh2 has reported one. */
export function exitStatusOf(channel: ClientChannel): ExitStatus | undefined {
  return exitStatus.get(channel);
}

/**
 * Asks the remote process of `channel` to die, then closes the channel. Signals are best effort:
 * OpenSSH ignores them in some setups (seen for root logins on OpenSSH 9.2), and then sshd keeps
 * the channel — and we keep its permit — until the remote command ends by itself. Callers that
 * can, bound their commands on the remote side too (SlurmClient uses `timeout`).
 */
export function killChannel(channel: ClientChannel): void {
  try {
    channel.signal('KILL');
  } catch {
    /* the channel may already be closing */
  }
  channel.close();
}

/**
 * Opens an exec channel for `command` under a channel permit. The permit is held until the
 * channel is closed on both sides, which is when sshd stops counting it — not when the caller's
 * call settles (a timed-out command's channel is still open). An open the server refused
 * (ChannelOpenError: nothing ran) is asked for again `retries` times, after 25, 50, 100 … ms.
 */
export async function openCommand(session: Session, command: string, retries: number, counters: ChannelCounters): Promise<ClientChannel> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await openCommandOnce(session, command);
    } catch (err) {
      if (!(err instanceof ChannelOpenError) || attempt >= retries || !session.alive) throw err;
      counters.reopened++;
      await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
    }
  }
}

async function openCommandOnce(session: Session, command: string): Promise<ClientChannel> {
  const release = await session.acquireChannel();
  const channel = await session.track<ClientChannel>((resolve, reject) => {
    session.client.exec(command, (err, stream) => {
      if (err) {
        release();
        reject(session.channelOpenError(err));
        return;
      }
      stream.on('close', () => release());
      // Listened for here, in the callback: a fast command's exit-status can arrive before the
      // caller (after an await) attaches its listeners, and ssh2 would emit it to nobody — the
      // command would read as killed (exit null). Seen against the 24.11 cluster's sshd.
      stream.on('exit', (code: number | null, signal?: string) => {
        exitStatus.set(stream, { code: typeof code === 'number' ? code : null, signal: signal ?? null });
      });
      resolve(stream);
    });
  });
  return channel;
}
