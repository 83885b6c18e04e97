// erg cancel CAMPAIGN | erg cancel --run RUN
import type { Command } from 'commander';
import type { CommandContext } from '../context';
import { jsonOption, withExamples, type Act } from './register';
import { parseId } from './args';
import { countsText } from '../watch/progress';

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

const RUN_OUTCOMES = {
  cancelled: 'cancelled (it had not been submitted yet)',
  cancelling: "cancelling: its Slurm job (an array task alone) is scancelled on the scheduler's next cycle",
  ended: 'already ended; nothing to cancel',
} as const;

async function cancelRun(ctx: CommandContext, id: string, opts: { json?: boolean }): Promise<void> {
  const answer = await ctx.connect().call((c) => c.POST('/v1/runs/{id}/cancel', { params: { path: { id } } }));
  if (opts.json) return void ctx.stdout.write(JSON.stringify(answer, null, 2) + '\n');
  ctx.stdout.write(`Run ${id}: ${RUN_OUTCOMES[answer.outcome]}; the rest of its campaign goes on\n`);
}

async function cancel(ctx: CommandContext, id: string, opts: { json?: boolean; run?: boolean }): Promise<void> {
  if (opts.run) return cancelRun(ctx, id, opts);
  const campaign = await ctx.connect().call((c) => c.POST('/v1/campaigns/{id}/cancel', { params: { path: { id } } }));
  if (opts.json) return void ctx.stdout.write(JSON.stringify(campaign, null, 2) + '\n');
  const { pending, active } = campaign.cancelling;
  const what =
    pending + active === 0
      ? 'nothing left to cancel'
      : `cancelling ${plural(pending + active, 'run')}: ${pending} not yet submitted (by erg), ${plural(active, 'Slurm job')} (scancel on the scheduler's next cycle)`;
  const next = campaign.state === 'cancelling' ? `; follow it with: erg watch ${id}` : '';
  ctx.stdout.write(`Campaign ${campaign.name}: ${campaign.state} (${countsText(campaign.runCounts)}); ${what}${next}\n`);
}

export function registerCancel(program: Command, act: Act): void {
  withExamples(
    program
      .command('cancel')
      .summary('cancel a campaign, or one run of it')
      .description(
        'cancel a campaign: pending runs at once, queued and running Slurm jobs by scancel; prints the resulting state. ' +
          'With --run, cancel one run alone (for a task of an array job, that task only); the rest of its campaign goes on',
      )
      .argument('<id>', 'campaign id (a run id with --run)', parseId('campaign or run'))
      .option('--run', 'the id is a run: cancel that run alone')
      .addOption(jsonOption("print the API's JSON answer")),
    'erg cancel 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f',
    'erg cancel --run 2f1e0d9c-8b7a-4c6d-9e8f-7a6b5c4d3e2f',
  ).action(act((ctx, cmd) => cancel(ctx, cmd.processedArgs[0] as string, cmd.opts())));
}
