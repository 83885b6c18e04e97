// erg campaigns: the newest campaigns, to find an id.
import { InvalidArgumentError, type Command } from 'commander';
import type { CommandContext } from '../context';
import { renderTable } from '../output/table';
import { jsonOption, withExamples, type Act } from './register';
import { countsText } from '../watch/progress';
import { NO_VALUE } from '@erg/format';

function parseLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 500) throw new InvalidArgumentError('expected a whole number from 1 to 500');
  return n;
}

async function campaigns(ctx: CommandContext, opts: { limit: number; json?: boolean }): Promise<void> {
  const page = await ctx.connect().call((c) => c.GET('/v1/campaigns', { params: { query: { limit: opts.limit } } }));
  if (opts.json) return void ctx.stdout.write(JSON.stringify(page, null, 2) + '\n');
  if (page.items.length === 0) return void ctx.stdout.write('No campaigns yet.\n');
  const rows = page.items.map((c) => [c.id, c.name, c.cluster ?? '(import)', c.owner ?? NO_VALUE, c.state, String(c.totalRuns), countsText(c.runCounts), c.createdAt]);
  ctx.stdout.write(
    renderTable(
      [{ header: 'ID' }, { header: 'NAME' }, { header: 'CLUSTER' }, { header: 'OWNER' }, { header: 'STATE' }, { header: 'RUNS', align: 'right' }, { header: 'BY STATE' }, { header: 'CREATED' }],
      rows,
      { header: ctx.color.bold },
    ),
  );
  if (page.next) ctx.stderr.write(`note: only the newest ${opts.limit} are shown (--limit up to 500)\n`);
}

export function registerCampaigns(program: Command, act: Act): void {
  withExamples(
    program
      .command('campaigns')
      .summary('list the newest campaigns')
      .description('list the newest campaigns: id, name, cluster, owner (the user who started it, or suite:NAME), state and runs by state')
      .option('--limit <n>', 'how many (1-500)', parseLimit, 20)
      .addOption(jsonOption()),
    'erg campaigns',
    'erg campaigns --limit 100 --json | jq -r \'.items[] | select(.state == "failed") | .id\'',
  ).action(act((ctx, cmd) => campaigns(ctx, cmd.opts())));
}
