// erg decisions CAMPAIGN [--json]: what an adaptive campaign decided, and why.
import type { Command } from 'commander';
import type { CommandContext } from '../context';
import { decisionsReport } from '../decisions/render';
import { jsonOption, withExamples, type Act } from './register';
import { parseId } from './args';

async function decisions(ctx: CommandContext, id: string, opts: { json?: boolean }): Promise<void> {
  const view = await ctx.connect().call((c) => c.GET('/v1/campaigns/{id}/decisions', { params: { path: { id } } }));
  ctx.stdout.write(opts.json ? JSON.stringify(view, null, 2) + '\n' : decisionsReport(view, ctx.color));
}

export function registerDecisions(program: Command, act: Act): void {
  withExamples(
    program
      .command('decisions')
      .summary("an adaptive campaign's decisions: dropped, settled, undecided, and why")
      .description(
        "an adaptive campaign's strategy, the runs it used against the full grid, why it stopped or what is undecided, and per configuration its status " +
          '(sampling, dropped, front, precise, exhausted) with the reason (the dominating configuration and p, or the interval widths)',
      )
      .argument('<campaign>', 'campaign id', parseId('campaign'))
      .addOption(jsonOption("print the API's JSON (GET /v1/campaigns/{id}/decisions)")),
    'erg decisions 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f',
    "erg decisions 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f --json | jq '.decisions[] | select(.status == \"dropped\") | .reason'",
  ).action(act((ctx, cmd) => decisions(ctx, cmd.processedArgs[0] as string, cmd.opts())));
}
