// erg results CAMPAIGN [--format table|csv|json|markdown] [--sort energy|time|edp] [--group-by configuration|fingerprint] [--objectives A,B] [--valid-only] [--by-phase | --data-movement]
import type { Command } from 'commander';
import { CampaignResults, OBJECTIVES, type Objective } from '@erg/spec';
import type { CommandContext } from '../context';
import { CliError, usageError, withFlagNames } from '../errors';
import { withExamples, type Act } from './register';
import { renderPhaseResults } from '../results/by-phase';
import { renderDataMovement } from '../results/data-movement';
import { ResultsSort, sortResults } from '../results/model';
import { renderResults, ResultsFormat } from '../results/render';
import { parseChoice, parseId, parseObjectivesArg } from './args';

/** `--group-by`: one entry per configuration (the API's default), or per configuration and kind of machine. */
export const ResultsGrouping = CampaignResults.shape.groupedBy;
export type ResultsGrouping = (typeof ResultsGrouping.options)[number];

/** Which flag sets each query field, to name the flag when the API refuses a field. */
const FLAG_OF: Record<string, string> = { groupBy: '--group-by', objectives: '--objectives' };

export interface ResultsOptions {
  format: ResultsFormat;
  sort?: ResultsSort;
  groupBy?: ResultsGrouping;
  /** The two objectives the API decides the Pareto front on; absent: its default (time, energy). */
  objectives?: [Objective, Objective];
  /** One row per configuration and phase instead of one per configuration. */
  byPhase?: boolean;
  /** Bytes per configuration and link kind (and per phase) instead of the figures per configuration. */
  dataMovement?: boolean;
  /** Leave runs that failed a validity gate out of the figures (the API's ?valid=only). */
  validOnly?: boolean;
}

/** Fetches a campaign's results and writes them to stdout in `format` (per phase with `byPhase`). */
export async function printResults(ctx: CommandContext, id: string, opts: ResultsOptions): Promise<void> {
  // Phases are summarised per configuration only: refused before any request.
  if (opts.byPhase && opts.groupBy === 'fingerprint') {
    throw usageError('--by-phase cannot be combined with --group-by fingerprint: phases are summarised per configuration', 'drop --group-by fingerprint (or --by-phase)');
  }
  if (opts.dataMovement && opts.groupBy === 'fingerprint') {
    throw usageError('--data-movement cannot be combined with --group-by fingerprint: data movement is summarised per configuration', 'drop --group-by fingerprint (or --data-movement)');
  }
  if (opts.dataMovement && opts.byPhase) {
    throw usageError('--data-movement and --by-phase are two views: choose one', '--data-movement already shows bytes per phase beside energy per phase');
  }
  const query = {
    ...(opts.groupBy === undefined ? {} : { groupBy: opts.groupBy }),
    ...(opts.objectives === undefined ? {} : { objectives: opts.objectives.join(',') }),
    ...(opts.validOnly ? { valid: 'only' as const } : {}),
  };
  const results = await ctx
    .connect()
    .call((c) => c.GET('/v1/campaigns/{id}/results', { params: { path: { id }, query } }))
    .catch((err: unknown) => {
      throw err instanceof CliError ? withFlagNames(err, FLAG_OF) : err;
    });
  const sorted = sortResults(results, opts.sort);
  if (!opts.byPhase && !opts.dataMovement) return void ctx.stdout.write(renderResults(sorted, opts.format, ctx.color));
  const render = opts.byPhase ? renderPhaseResults : renderDataMovement;
  const out = render(sorted, opts.format, ctx.color, { sorted: opts.sort !== undefined });
  ctx.stdout.write(out.stdout);
  if (out.stderr !== '') ctx.stderr.write(out.stderr);
}

export function registerResults(program: Command, act: Act): void {
  withExamples(
    program
      .command('results')
      .summary("a campaign's time, energy, EDP, carbon and cost per configuration")
      .description(
        "a campaign's results per configuration: time, energy, power, EDP — and carbon and cost where its clusters have those settings — with 95 % intervals, Pareto front and best configurations; " +
          'with --by-phase, its energy per configuration and phase the runs marked; with --data-movement, the bytes each configuration moved per kind of link, J per GB and transfer overlap',
      )
      .argument('<campaign>', 'campaign id', parseId('campaign'))
      .option('--format <format>', `output format: ${ResultsFormat.options.join(', ')}`, parseChoice(ResultsFormat), 'table')
      .option('--sort <by>', `sort by mean ${ResultsSort.options.join(', ')} (ascending); default: the spec's configuration order`, parseChoice(ResultsSort))
      .option('--group-by <what>', 'configuration (default): one row per configuration; fingerprint: one per configuration and kind of machine its runs ran on', parseChoice(ResultsGrouping))
      .option('--objectives <a,b>', `the two objectives the Pareto front (mark P) is decided on, of ${OBJECTIVES.join(', ')}; default time,energy`, parseObjectivesArg)
      .option(
        '--by-phase',
        "one row per configuration and phase its runs marked (self and inclusive energy, time, share), then which phases account for what the runtime-optimal configuration spends beyond the energy-optimal one; json: the API's phases member",
      )
      .option('--valid-only', 'leave runs that failed a validity gate out of every figure (they are listed as left out, with their reasons); the last line says whether the results are publishable')
      .option(
        '--data-movement',
        "one row per configuration and link kind (PCIe, NVLink, NVLink-C2C, host memory): bytes and rate per run, J per GB, the share of GPU busy time overlapped with transfers; then bytes per phase beside energy per phase; json: the API's dataMovement member",
      )
      .addHelpText(
        'after',
        '\ntable and markdown use units with prefixes (kJ, ms, J·s, kgCO₂e); csv and json carry raw SI numbers (J, s, W, J·s, gCO2e). ' +
          'Carbon and cost columns appear only where some configuration has those figures.',
      ),
    'erg results 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f',
    'erg results 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f --format csv --sort energy > results.csv',
    'erg results 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f --format markdown >> "$GITHUB_STEP_SUMMARY"',
    'erg results 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f --group-by fingerprint',
    'erg results 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f --objectives time,carbon',
    'erg results 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f --by-phase',
    'erg results 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f --by-phase --format csv > phases.csv',
    'erg results 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f --data-movement',
    'erg results 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f --valid-only',
  ).action(act((ctx, cmd) => printResults(ctx, cmd.processedArgs[0] as string, cmd.opts())));
}
