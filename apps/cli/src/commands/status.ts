// erg status CAMPAIGN: state, counts, and why runs are waiting.
import type { Command } from 'commander';
import type { RunSummary } from '@erg/client';
import type { CommandContext } from '../context';
import { renderFields } from '../output/table';
import { formatElapsed, plural, runOrderLabel, startedByLabel } from '@erg/format';
import { jsonOption, withExamples, type Act } from './register';
import { fetchRuns } from '../runs-query';
import { countsText } from '../watch/progress';
import { parseId } from './args';

/** States in which a run waits for something (the scheduler, the cluster, Slurm). */
const WAITING: RunSummary['state'][] = ['pending', 'queued'];

/** What a waiting run without a stored reason is waiting for. */
const NO_REASON: Partial<Record<RunSummary['state'], string>> = {
  pending: 'waiting for the scheduler to submit it',
  queued: 'queued in Slurm (no reason given)',
};

/** Waiting runs grouped by state and reason, largest group first: "3 runs queued: Resources". */
export function waitingReasons(runs: readonly RunSummary[]): string[] {
  const groups = new Map<string, { state: string; reason: string; n: number }>();
  for (const run of runs) {
    const reason = run.reason ?? NO_REASON[run.state] ?? 'no reason given';
    const key = `${run.state}\0${reason}`;
    const group = groups.get(key) ?? { state: run.state, reason, n: 0 };
    group.n++;
    groups.set(key, group);
  }
  return [...groups.values()].sort((a, b) => b.n - a.n).map((g) => `${plural(g.n, 'run')} ${g.state}: ${g.reason}`);
}

async function status(ctx: CommandContext, id: string, opts: { json?: boolean }): Promise<void> {
  const api = ctx.connect();
  const campaign = await api.call((c) => c.GET('/v1/campaigns/{id}', { params: { path: { id } } }));
  if (opts.json) return void ctx.stdout.write(JSON.stringify(campaign, null, 2) + '\n');
  const waiting = (await Promise.all(WAITING.map((state) => fetchRuns(api, id, state)))).flat();
  const age = (ctx.runtime.now() - Date.parse(campaign.createdAt)) / 1000;
  ctx.stdout.write(
    renderFields([
      ['Campaign', `${campaign.name} (${campaign.id})`],
      ['State', campaign.state],
      ['Cluster', campaign.cluster ?? '(none: import campaign)'],
      // An API from before creators were told apart says none.
      ...(campaign.createdBy ? [['Started by', startedByLabel(campaign.createdBy)] as [string, string]] : []),
      ['Created', `${campaign.createdAt} (${formatElapsed(Math.max(0, age))} ago)`],
      ['Runs', `${campaign.totalRuns}: ${countsText(campaign.runCounts, ctx.color)}`],
      // An API from before run orders says none.
      ...(campaign.design ? [['Run order', runOrderLabel(campaign.design)] as [string, string]] : []),
      ...(campaign.cancelRequestedAt ? [['Cancel', `requested at ${campaign.cancelRequestedAt}`] as [string, string]] : []),
    ]),
  );
  if (waiting.length > 0) ctx.stdout.write(`\nWaiting:\n${waitingReasons(waiting).map((l) => `  ${l}`).join('\n')}\n`);
}

export function registerStatus(program: Command, act: Act): void {
  withExamples(
    program
      .command('status')
      .summary("a campaign's state and why runs wait")
      .description("a campaign's state, runs by state, cluster, creation time, and why its waiting runs wait")
      .argument('<campaign>', 'campaign id', parseId('campaign'))
      .addOption(jsonOption()),
    'erg status 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f',
  ).action(act((ctx, cmd) => status(ctx, cmd.processedArgs[0] as string, cmd.opts())));
}
