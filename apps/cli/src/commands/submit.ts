// erg submit FILE [--watch]: create a campaign from a spec file, as written.
import { Option, type Command } from 'commander';
import type { CampaignCreated } from '@erg/client';
import { CampaignSpec, decodeCampaignText } from '@erg/spec';
import type { CommandContext } from '../context';
import { CliError, EXIT, type ExitCode } from '../errors';
import { formatCount, plural, runOrderLabel } from '@erg/format';
import { withExamples, type Act } from './register';
import { parseSeconds } from './args';
import { printResults } from './results';
import { readSpecFile, specFormat } from './validate';
import { DEFAULT_INTERVAL_S, watchCampaign } from './watch';

const CONTENT_TYPE = { yaml: 'application/yaml', json: 'application/json' } as const;

interface SubmitOptions {
  watch?: boolean;
  interval: number;
  quiet?: boolean;
}

/** POST /v1/campaigns with the file's text unchanged, so that YAML errors name its own lines and columns. */
async function create(ctx: CommandContext, file: string, text: string): Promise<CampaignCreated> {
  try {
    return await ctx.connect().call((c) =>
      c.POST('/v1/campaigns', {
        body: text as never,
        bodySerializer: (body: unknown) => body as string,
        headers: { 'Content-Type': CONTENT_TYPE[specFormat(file)] },
      }),
    );
  } catch (err) {
    if (err instanceof CliError && err.api?.code === 'ERG_UNKNOWN_CLUSTER') {
      throw new CliError(err.message, err.exitCode, { details: err.details, api: err.api, hint: 'register the cluster first: erg clusters add --help (erg clusters list shows those registered)' });
    }
    if (err instanceof CliError && err.api?.code === 'ERG_VALIDATION') {
      throw new CliError(`${file} was refused: it is not a valid campaign spec`, EXIT.BAD, { details: err.details, api: err.api, hint: `\`erg validate ${file}\` checks a spec without the API` });
    }
    throw err;
  }
}

async function submit(ctx: CommandContext, file: string, opts: SubmitOptions): Promise<ExitCode> {
  const text = readSpecFile(file, ctx.runtime.cwd);
  const campaign = await create(ctx, file, text);
  if (opts.quiet) {
    ctx.stdout.write(`${campaign.id}\n`);
    return EXIT.OK;
  }
  const configurations = campaign.configurations.length;
  const repetitions = configurations === 0 ? 0 : Math.round(campaign.totalRuns / configurations);
  // The API took the spec, so it parses here too: its strategy says what the run count means.
  const decoded = decodeCampaignText(text, specFormat(file));
  const parsed = decoded.ok ? CampaignSpec.safeParse(decoded.raw) : null;
  const strategy = parsed?.success ? parsed.data.strategy : undefined;
  const runs = strategy?.kind === 'search'
    ? `a search of ${plural(configurations, 'configuration')}: at most ${formatCount(strategy.budget.maxRuns)} runs, proposed as results land`
    : strategy?.kind === 'adaptive'
      ? `${plural(configurations, 'configuration')}: ${formatCount(campaign.totalRuns)} first runs; more only where they change a decision`
      : `${plural(configurations, 'configuration')} × ${plural(repetitions, 'repetition')} = ${formatCount(campaign.totalRuns)} runs`;
  ctx.stdout.write(
    [
      `Campaign ${ctx.color.bold(campaign.name)} created: ${campaign.id}`,
      `  ${runs}${campaign.cluster ? ` on cluster ${campaign.cluster}` : ''}`,
      ...(campaign.design ? [`  run order: ${runOrderLabel(campaign.design)}`] : []),
      ...(opts.watch ? [''] : [`Watch it:     erg watch ${campaign.id}`, `Results:      erg results ${campaign.id}`]),
    ].join('\n') + '\n',
  );
  if (!opts.watch) return EXIT.OK;
  const code = await watchCampaign(ctx, campaign.id, opts.interval);
  if (code === EXIT.INTERRUPTED) return code;
  ctx.stdout.write('\n');
  await printResults(ctx, campaign.id, { format: 'table' });
  return code;
}

export function registerSubmit(program: Command, act: Act): void {
  withExamples(
    program
      .command('submit')
      .summary('create a campaign from a spec file')
      .description('create a campaign from a spec file (YAML or JSON); prints its id, size and how to follow it')
      .argument('<file>', 'campaign spec: .yaml/.yml is sent as YAML, anything else as JSON')
      .option('--watch', 'then follow it as `erg watch` does and print its results (exit code as for watch)')
      .option('--interval <seconds>', 'with --watch: seconds between polls', parseSeconds, DEFAULT_INTERVAL_S)
      .addOption(new Option('-q, --quiet', 'print only the campaign id (for scripts)').conflicts('watch'))
      .addHelpText('after', '\nA spec the API refuses is listed issue by issue as `path: message` (exit 1).'),
    'erg submit examples/quickstart.yaml',
    'erg submit examples/quickstart.yaml --watch',
    'ID=$(erg submit -q study.json)',
  ).action(act((ctx, cmd) => submit(ctx, cmd.processedArgs[0] as string, cmd.opts<SubmitOptions>())));
}
