// erg cancel CAMPAIGN
import type { Command } from 'commander';
import type { CommandContext } from '../context';
import { jsonOption, withExamples, type Act } from '../program';
import { parseId } from './args';
import { countsText } from '../watch/progress';

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

async function cancel(ctx: CommandContext, id: string, opts: { json?: boolean }): Promise<void> {
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
      .summary('cancel a campaign')
      .description('cancel a campaign: pending runs at once, queued and running Slurm jobs by scancel; prints the resulting state')
      .argument('<campaign>', 'campaign id', parseId('campaign'))
      .addOption(jsonOption("print the API's JSON of the campaign")),
    'erg cancel 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f',
  ).action(act((ctx, cmd) => cancel(ctx, cmd.processedArgs[0] as string, cmd.opts())));
}
