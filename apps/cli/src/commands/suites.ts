// erg suites list|show|apply|runs|trigger|delete: regression suites on the server (docs/suites.md).
import { InvalidArgumentError, type Command } from 'commander';
import type { Suite, SuiteRun } from '../api-types';
import type { CommandContext } from '../context';
import { CliError, EXIT } from '../errors';
import { renderFields, renderTable } from '../output/table';
import { NO_VALUE, formatPercent } from '@erg/format';
import { jsonOption, withExamples, type Act } from './register';
import { countsText } from '../watch/progress';
import { readSpecFile, specFormat } from './validate';

const CONTENT_TYPE = { yaml: 'application/yaml', json: 'application/json' } as const;

function scheduleText(s: Suite): string {
  if (!s.schedule) return 'on demand only';
  return `${s.schedule.cron} (${s.schedule.timezone}), next ${s.schedule.nextRunAt ?? NO_VALUE}`;
}

function baselineText(s: Suite): string {
  return s.baseline.policy === 'pinned' ? `pinned: campaign ${s.baseline.campaignId ?? '(deleted)'}` : 'the last passing run';
}

function policyText(s: Suite): string {
  const r = s.regression;
  const fixed = `slower or costlier by more than ${formatPercent(r.threshold)} at p < ${r.alpha}; ≥ ${r.minRepetitions} repetitions, CV ≤ ${formatPercent(r.maxCv)}`;
  const seq = r.sequential;
  return seq ? `${fixed}; sequential: ${r.minRepetitions} to ${seq.maxRepetitions} repetitions (${seq.spending}), alpha for the whole run` : fixed;
}

/** The suite run's status as a word, with its reasons. */
export function suiteRunStatusText(run: Pick<SuiteRun, 'status' | 'reasons'>): string {
  return run.reasons.length > 0 ? `${run.status} (${run.reasons.join(', ')})` : run.status;
}

async function list(ctx: CommandContext, opts: { json?: boolean }): Promise<void> {
  const { items } = await ctx.connect().call((c) => c.GET('/v1/suites'));
  if (opts.json) return void ctx.stdout.write(JSON.stringify({ items }, null, 2) + '\n');
  if (items.length === 0) return void ctx.stdout.write('No suites. Create one with: erg suites apply SUITE.yaml\n');
  ctx.stdout.write(
    renderTable(
      [{ header: 'SUITE' }, { header: 'CLUSTER' }, { header: 'SCHEDULE' }, { header: 'NEXT RUN' }, { header: 'LAST RUN' }],
      items.map((s) => [
        s.name, s.cluster ?? NO_VALUE, s.schedule ? `${s.schedule.cron} ${s.schedule.timezone}` : 'on demand', s.schedule?.nextRunAt ?? NO_VALUE,
        s.lastRun ? `${s.lastRun.status} ${s.lastRun.createdAt}` : NO_VALUE,
      ]),
      { header: ctx.color.bold },
    ),
  );
}

async function show(ctx: CommandContext, name: string, opts: { json?: boolean }): Promise<void> {
  const s = await ctx.connect().call((c) => c.GET('/v1/suites/{name}', { params: { path: { name } } }));
  if (opts.json) return void ctx.stdout.write(JSON.stringify(s, null, 2) + '\n');
  ctx.stdout.write(
    renderFields([
      ['Suite', `${s.name} (${s.id})`],
      ...(s.description ? [['Description', s.description] as [string, string]] : []),
      ['Cluster', s.cluster ?? NO_VALUE],
      ['Schedule', scheduleText(s)],
      ['Baseline', baselineText(s)],
      ['Regression', policyText(s)],
      ['Webhook', s.webhook ? `${s.webhook.url}${s.webhook.signed ? ' (signed)' : ''}` : 'none'],
      ['Last run', s.lastRun ? `${s.lastRun.id}: ${s.lastRun.status}, started ${s.lastRun.createdAt}` : 'none yet'],
    ]),
  );
}

/** PUT /v1/suites/:name with the file as written; the name comes from the file. */
async function apply(ctx: CommandContext, file: string, opts: { json?: boolean }): Promise<void> {
  const text = readSpecFile(file, ctx.runtime.cwd);
  const format = specFormat(file);
  const name = suiteNameOf(text, format, file);
  const api = ctx.connect();
  let suite: Suite;
  try {
    suite = await api.call((c) =>
      c.PUT('/v1/suites/{name}', {
        params: { path: { name } },
        body: text as never,
        bodySerializer: (body: unknown) => body as string,
        headers: { 'Content-Type': CONTENT_TYPE[format] },
      }),
    );
  } catch (err) {
    if (err instanceof CliError && err.api?.code === 'ERG_VALIDATION') {
      throw new CliError(`${file} was refused: it is not a valid suite`, EXIT.BAD, { details: err.details, api: err.api, hint: `\`erg validate ${file}\` checks a suite without the API; see docs/suites.md` });
    }
    throw err;
  }
  if (opts.json) return void ctx.stdout.write(JSON.stringify(suite, null, 2) + '\n');
  ctx.stdout.write(`Suite ${ctx.color.bold(suite.name)} stored. Schedule: ${scheduleText(suite)}. Baseline: ${baselineText(suite)}.\n`);
  ctx.stdout.write(`Run it now:   erg regress --suite ${suite.name} --trigger --wait\n`);
}

/** The suite's name, read from the file so that `apply` knows which URL to PUT. */
function suiteNameOf(text: string, format: 'yaml' | 'json', file: string): string {
  const match = format === 'json' ? /"name"\s*:\s*"([^"]+)"/.exec(text) : /^name:\s*["']?([A-Za-z0-9-]+)["']?\s*(#.*)?$/m.exec(text);
  if (!match?.[1]) throw new CliError(`${file} has no top-level name`, EXIT.BAD, { hint: 'a suite file starts with `name: my-suite` (see docs/suites.md)' });
  return match[1];
}

async function runs(ctx: CommandContext, name: string, opts: { limit: number; json?: boolean }): Promise<void> {
  const page = await ctx.connect().call((c) => c.GET('/v1/suites/{name}/runs', { params: { path: { name }, query: { limit: opts.limit } } }));
  if (opts.json) return void ctx.stdout.write(JSON.stringify(page, null, 2) + '\n');
  if (page.items.length === 0) return void ctx.stdout.write(`Suite ${name} has not run yet. Start it with: erg regress --suite ${name} --trigger\n`);
  ctx.stdout.write(
    renderTable(
      [{ header: 'RUN' }, { header: 'STARTED' }, { header: 'TRIGGER' }, { header: 'STATUS' }, { header: 'CAMPAIGN' }, { header: 'BASELINE' }, { header: 'RUNS' }],
      page.items.map((r) => [r.id, r.createdAt, r.trigger, suiteRunStatusText(r), r.campaignId, r.baselineId ?? NO_VALUE, countsText(r.campaign.runCounts)]),
      { header: ctx.color.bold },
    ),
  );
  if (page.total > page.items.length) ctx.stdout.write(`(${page.items.length} of ${page.total}; --limit shows more)\n`);
}

async function trigger(ctx: CommandContext, name: string, opts: { idempotencyKey?: string; json?: boolean }): Promise<void> {
  const run = await ctx.connect().call((c) =>
    c.POST('/v1/suites/{name}/trigger', { params: { path: { name }, header: opts.idempotencyKey ? { 'idempotency-key': opts.idempotencyKey } : {} } }),
  );
  if (opts.json) return void ctx.stdout.write(JSON.stringify(run, null, 2) + '\n');
  ctx.stdout.write(`Run ${run.id} of suite ${name} started: campaign ${run.campaignId}, baseline ${run.baselineId ?? 'none yet'}\n`);
  ctx.stdout.write(`Follow it:    erg regress --suite ${name} --wait\n`);
}

async function remove(ctx: CommandContext, name: string): Promise<void> {
  const api = ctx.connect();
  // 204 has no body, which call() would take for a broken answer: errors still come out of it.
  await api.call(async (c) => {
    await c.DELETE('/v1/suites/{name}', { params: { path: { name } } });
    return { data: null };
  });
  ctx.stdout.write(`Suite ${name} deleted (its campaigns stay).\n`);
}

function parseLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 200) throw new InvalidArgumentError('expected a whole number from 1 to 200');
  return n;
}

export function registerSuites(program: Command, act: Act): void {
  const suites = withExamples(
    program
      .command('suites')
      .summary('regression suites: list, show, apply, runs, trigger, delete')
      .description('regression suites: a campaign template with a schedule, a baseline and a regression policy (docs/suites.md)'),
    'erg suites apply erg/nightly-gemm.yaml',
    'erg suites runs nightly-gemm',
  );
  withExamples(suites.command('list').summary('every suite').description('every suite with its schedule, next run and last run').addOption(jsonOption()), 'erg suites list').action(
    act((ctx, cmd) => list(ctx, cmd.opts())),
  );
  withExamples(
    suites.command('show').summary('one suite').description("one suite: cluster, schedule, baseline, regression policy, webhook, last run").argument('<name>', 'suite name').addOption(jsonOption()),
    'erg suites show nightly-gemm',
  ).action(act((ctx, cmd) => show(ctx, cmd.processedArgs[0] as string, cmd.opts())));
  withExamples(
    suites
      .command('apply')
      .summary('create or replace a suite from a file')
      .description('create or replace a suite from a YAML or JSON file (idempotent: run it from CI to keep the server equal to the file)')
      .argument('<file>', 'suite file: .yaml/.yml is sent as YAML, anything else as JSON')
      .addOption(jsonOption("print the API's JSON of the suite")),
    'erg suites apply erg/nightly-gemm.yaml',
  ).action(act((ctx, cmd) => apply(ctx, cmd.processedArgs[0] as string, cmd.opts())));
  withExamples(
    suites
      .command('runs')
      .summary("a suite's runs")
      .description("a suite's runs, newest first: trigger, status with reasons, campaign, baseline, run counts")
      .argument('<name>', 'suite name')
      .option('--limit <n>', 'how many (1-200)', parseLimit, 20)
      .addOption(jsonOption()),
    'erg suites runs nightly-gemm --limit 5',
  ).action(act((ctx, cmd) => runs(ctx, cmd.processedArgs[0] as string, cmd.opts())));
  withExamples(
    suites
      .command('trigger')
      .summary('start a run of a suite now')
      .description('start a run of a suite now, without waiting (erg regress --trigger --wait starts one and waits for its verdict)')
      .argument('<name>', 'suite name')
      .option('--idempotency-key <key>', 'retries with the same key return the same run instead of starting another')
      .addOption(jsonOption()),
    'erg suites trigger nightly-gemm',
  ).action(act((ctx, cmd) => trigger(ctx, cmd.processedArgs[0] as string, cmd.opts())));
  withExamples(
    suites.command('delete').summary('delete a suite').description('delete a suite and its schedule; the campaigns it ran stay').argument('<name>', 'suite name'),
    'erg suites delete nightly-gemm',
  ).action(act((ctx, cmd) => remove(ctx, cmd.processedArgs[0] as string)));
}
