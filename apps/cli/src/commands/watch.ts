// erg watch CAMPAIGN: live progress until the campaign is finished.
import type { Command } from 'commander';
import type { Campaign } from '@erg/client';
import type { CommandContext, Output } from '../context';
import { CliError, EXIT, type ExitCode } from '../errors';
import { colors, displayWidth } from '../output/color';
import { formatElapsed } from '@erg/format';
import { withExamples, type Act } from './register';
import type { CampaignDecisions } from '../api-types';
import { countsText, doneRuns, EtaEstimator, isFinal, progressBar, progressText, strategyText, type Progress } from '../watch/progress';
import { parseId, parseSeconds } from './args';

/** Default seconds between two polls of GET /v1/campaigns/:id. */
export const DEFAULT_INTERVAL_S = 2;

/** Polls that may fail in a row (API restarting, a network blip) before watch gives up. */
const TOLERATED_FAILURES = 5;

const BAR_WIDTH = 24;
/** Back to the line's start and erase it: how a TTY line is redrawn in place. */
const REDRAW = '\r\x1b[2K';

function isAbort(err: unknown): boolean {
  return (err as { name?: unknown } | null)?.name === 'AbortError';
}

/** A failure worth another poll: no answer, or a server error; not a bad token or an unknown id. */
function isTransient(err: unknown): boolean {
  return err instanceof CliError && (err.api === undefined || err.api.status >= 500);
}

/** How the watch ended; the exit code follows from it. */
function finalMessage(campaign: Campaign, watchedS: number | null): { text: string; code: ExitCode } {
  const counts = countsText(campaign.runCounts);
  const took = watchedS === null ? '' : ` after ${formatElapsed(watchedS)}`;
  if (campaign.state === 'completed') {
    return { text: `Campaign ${campaign.name} completed${took}: ${counts}.`, code: EXIT.OK };
  }
  const hint = campaign.state === 'failed' ? ` See the runs that did not complete: erg runs ${campaign.id}` : '';
  return { text: `Campaign ${campaign.name} ${campaign.state}${took}: ${counts}.${hint}`, code: EXIT.BAD };
}

/**
 * Follows a campaign until it is completed, failed or cancelled: exit 0 when every run completed,
 * 1 when it ended failed or cancelled, 130 on Ctrl-C (which stops watching, not the campaign).
 * On a terminal the progress line is redrawn in place; elsewhere one plain line is printed each
 * time the counts change, without any escape code, so logs stay readable. Progress goes to `out`
 * (stdout by default; a command whose stdout carries something else passes stderr).
 */
export async function watchCampaign(ctx: CommandContext, id: string, intervalS: number, out: Output = ctx.stdout): Promise<ExitCode> {
  const api = ctx.connect();
  const tty = out.isTTY;
  // Off a terminal the lines go to logs: plain text, even when FORCE_COLOR colours the rest.
  const paint = tty ? ctx.color : colors(false);
  const controller = new AbortController();
  const stopListening = ctx.runtime.onInterrupt(() => controller.abort());
  let estimator: EtaEstimator | null = null;
  let lastCounts = '';
  let failures = 0;
  let sawUnfinished = false;
  const interrupted = (): ExitCode => {
    if (tty) out.write('\n');
    ctx.stderr.write(`Stopped watching; the campaign goes on (it was not cancelled). Watch again with \`erg watch ${id}\`, cancel it with \`erg cancel ${id}\`.\n`);
    return EXIT.INTERRUPTED;
  };
  /** One poll; null after a failure worth retrying (already reported on stderr). */
  const poll = async (): Promise<Campaign | null> => {
    try {
      const campaign = await api.call((c) => c.GET('/v1/campaigns/{id}', { params: { path: { id } }, signal: controller.signal }));
      failures = 0;
      return campaign;
    } catch (err) {
      if (controller.signal.aborted || !isTransient(err) || ++failures >= TOLERATED_FAILURES) throw err;
      if (tty) out.write('\n');
      ctx.stderr.write(`warning: ${(err as CliError).message}; trying again (${failures}/${TOLERATED_FAILURES - 1})\n`);
      return null;
    }
  };
  /** An adaptive or search campaign's decisions so far (its strategy in its spec); null for a grid, or while they cannot be read. */
  const decisionsOf = async (campaign: Campaign & { spec?: unknown }): Promise<CampaignDecisions | null> => {
    const kind = (campaign.spec as { strategy?: { kind?: string } } | undefined)?.strategy?.kind;
    if (kind !== 'adaptive' && kind !== 'search') return null;
    try {
      return await api.call((c) => c.GET('/v1/campaigns/{id}/decisions', { params: { path: { id } }, signal: controller.signal }));
    } catch (err) {
      if (controller.signal.aborted || !isTransient(err)) throw err;
      return null;
    }
  };
  try {
    for (;;) {
      const campaign = await poll();
      if (campaign) {
        const decisions = await decisionsOf(campaign);
        const createdAtMs = Date.parse(campaign.createdAt);
        estimator ??= new EtaEstimator(createdAtMs);
        const now = ctx.runtime.now();
        const done = doneRuns(campaign.runCounts);
        const progress: Progress = {
          done,
          total: campaign.totalRuns,
          runCounts: campaign.runCounts,
          elapsedS: Math.max(0, (now - createdAtMs) / 1000),
          etaS: estimator.observe(now, done, campaign.totalRuns),
          ...(decisions ? { strategy: strategyText(decisions) } : {}),
        };
        if (tty) {
          drawInPlace(ctx, out, campaign, progress);
        } else {
          const counts = `${campaign.state} ${countsText(campaign.runCounts)} ${progress.strategy ?? ''}`;
          if (counts !== lastCounts) out.write(`${progressText(progress)}\n`);
          lastCounts = counts;
        }
        if (isFinal(campaign.state)) {
          if (tty) out.write('\n');
          const { text, code } = finalMessage(campaign, sawUnfinished ? progress.elapsedS : null);
          out.write(`${code === EXIT.OK ? paint.green(text) : paint.red(text)}\n`);
          return code;
        }
        sawUnfinished = true;
      }
      await ctx.runtime.sleep(intervalS * 1000, controller.signal);
    }
  } catch (err) {
    if (controller.signal.aborted || isAbort(err)) return interrupted();
    throw err;
  } finally {
    stopListening();
  }
}

/** The progress line on a terminal, redrawn over the previous one and cut to the terminal's width. */
function drawInPlace(ctx: CommandContext, out: Output, campaign: Campaign, progress: Progress): void {
  const bar = progressBar(progress.done, progress.total, BAR_WIDTH);
  const plain = `${campaign.name} ${bar} ${progressText(progress)}`;
  const width = (out.columns ?? 120) - 1;
  // A line longer than the terminal wraps, and \r would then redraw only its last part.
  const line = displayWidth(plain) > width ? [...plain].slice(0, width - 1).join('') + '…' : `${ctx.color.bold(campaign.name)} ${ctx.color.cyan(bar)} ${progressText(progress, ctx.color)}`;
  out.write(REDRAW + line);
}

export function registerWatch(program: Command, act: Act): void {
  withExamples(
    program
      .command('watch')
      .summary("follow a campaign's progress until it ends")
      .description('follow a campaign until it is finished: progress, counts by state, elapsed time, ETA (Ctrl-C stops watching, not the campaign)')
      .argument('<campaign>', 'campaign id', parseId('campaign'))
      .option('--interval <seconds>', 'seconds between polls', parseSeconds, DEFAULT_INTERVAL_S)
      .addHelpText('after', '\nExit code: 0 when every run completed, 1 when the campaign ended failed or cancelled.'),
    'erg watch 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f',
    'erg watch 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f --interval 10 > progress.log',
  ).action(act((ctx, cmd) => watchCampaign(ctx, cmd.processedArgs[0] as string, cmd.opts<{ interval: number }>().interval)));
}
