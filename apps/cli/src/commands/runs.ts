// erg runs CAMPAIGN [--state S]: one line per run.
import type { Command } from 'commander';
import { RunState } from '@erg/spec';
import type { RunSummary } from '@erg/client';
import type { CommandContext } from '../context';
import type { Colors } from '../output/color';
import { renderTable } from '../output/table';
import { NO_VALUE } from '@erg/format';
import { jsonOption, withExamples, type Act } from './register';
import { paintRunState } from '../run/render';
import { fetchRuns } from '../runs-query';
import { parseChoice, parseId } from './args';

/** The runs table: id, configuration, repetition, state, Slurm job, exit code, reason. */
export function runsTable(runs: readonly RunSummary[], color: Colors): string {
  const rows = runs.map((r) => [
    r.id, r.configurationKey, String(r.repetition), paintRunState(r.state, color), r.slurmJobId ?? NO_VALUE,
    r.exitCode === null ? NO_VALUE : String(r.exitCode), r.reason ?? '',
  ]);
  return renderTable(
    [{ header: 'RUN' }, { header: 'CONFIGURATION' }, { header: 'REP', align: 'right' }, { header: 'STATE' }, { header: 'JOB', align: 'right' }, { header: 'EXIT', align: 'right' }, { header: 'REASON' }],
    rows,
    { header: color.bold },
  );
}

async function runs(ctx: CommandContext, id: string, opts: { state?: RunSummary['state']; json?: boolean }): Promise<void> {
  const items = await fetchRuns(ctx.connect(), id, opts.state);
  if (opts.json) return void ctx.stdout.write(JSON.stringify({ items, total: items.length }, null, 2) + '\n');
  if (items.length === 0) return void ctx.stdout.write(opts.state ? `No runs in state ${opts.state}.\n` : 'No runs.\n');
  ctx.stdout.write(runsTable(items, ctx.color));
}

export function registerRuns(program: Command, act: Act): void {
  withExamples(
    program
      .command('runs')
      .summary("list a campaign's runs")
      .description("a campaign's runs: configuration, repetition, state, Slurm job id, exit code, reason")
      .argument('<campaign>', 'campaign id', parseId('campaign'))
      .option('--state <state>', `only runs in this state (${RunState.options.join(', ')})`, parseChoice(RunState))
      .addOption(jsonOption()),
    'erg runs 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f',
    'erg runs 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f --state failed',
  ).action(act((ctx, cmd) => runs(ctx, cmd.processedArgs[0] as string, cmd.opts())));
}
