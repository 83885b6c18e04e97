// erg regress --suite NAME [--trigger] [--wait] [--junit FILE] [--markdown FILE]: what a CI job
// runs. Exit 0 pass or improved, 1 regressed, 2 inconclusive or anything that kept erg from
// deciding (the API unreachable, the run could not start, still running, timed out).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import type { SuiteRun } from '../api-types';
import type { CommandContext } from '../context';
import { CliError, EXIT, usageError, type ExitCode } from '../errors';
import { colors } from '../output/color';
import { renderTable } from '../output/table';
import { formatElapsed, formatP } from '@erg/format';
import { withExamples, type Act } from './register';
import { junitReport } from '../report/junit';
import { markdownReport } from '../report/markdown';
import { changeText, intervalText, orderedVerdicts, sequentialText, SUITE_REASON_TEXT, type ReportClaims, type ReportInput } from '../report/verdict-text';
import { countsText, doneRuns } from '../watch/progress';
import { parseSeconds } from './args';
import { suiteRunStatusText } from './suites';

interface RegressOptions {
  suite: string;
  trigger?: boolean;
  wait?: boolean;
  timeout: number;
  interval: number;
  junit?: string;
  markdown?: string;
  json?: boolean;
  idempotencyKey?: string;
}

const EXIT_OF: Record<SuiteRun['status'], ExitCode> = { pass: EXIT.OK, improved: EXIT.OK, regressed: EXIT.BAD, inconclusive: EXIT.UNDECIDED, running: EXIT.UNDECIDED };

/** A duration such as 90m, 6h, 3600 (seconds) — how long --wait may wait. */
export function parseDuration(value: string): number {
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(value.trim());
  if (!m) throw new InvalidArgumentError('expected a duration such as 90m, 6h or 3600 (seconds)');
  const seconds = Number(m[1]) * { s: 1, m: 60, h: 3600 }[(m[2] ?? 's') as 's' | 'm' | 'h'];
  if (seconds < 1 || seconds > 7 * 24 * 3600) throw new InvalidArgumentError('expected a duration from 1 s to 7 days');
  return seconds;
}

/** Anything but a verdict (the API unreachable, a 4xx on trigger) is "could not decide": exit 2, never 1. */
function undecided(err: unknown): never {
  if (err instanceof CliError && err.exitCode === EXIT.BAD) throw new CliError(err.message, EXIT.UNDECIDED, { details: err.details, ...(err.hint ? { hint: err.hint } : {}), ...(err.api ? { api: err.api } : {}) });
  throw err;
}

async function startOrLatest(ctx: CommandContext, opts: RegressOptions): Promise<SuiteRun> {
  const api = ctx.connect();
  const name = opts.suite;
  if (opts.trigger) {
    const run = await api.call((c) =>
      c.POST('/v1/suites/{name}/trigger', { params: { path: { name }, header: opts.idempotencyKey ? { 'idempotency-key': opts.idempotencyKey } : {} } }),
    );
    ctx.stderr.write(`Started run ${run.id} of suite ${name}: campaign ${run.campaignId} (${run.campaign.totalRuns} runs), baseline ${run.baselineId ?? 'none yet'}\n`);
    return run;
  }
  const page = await api.call((c) => c.GET('/v1/suites/{name}/runs', { params: { path: { name }, query: { limit: 1 } } }));
  const latest = page.items[0];
  if (!latest) throw new CliError(`suite ${name} has not run yet`, EXIT.UNDECIDED, { hint: `start a run and wait for its verdict: erg regress --suite ${name} --trigger --wait` });
  return latest;
}

/**
 * Polls the suite run until it has a verdict, printing the campaign's progress to stderr each time
 * it changes; null when the deadline passes first. Ctrl-C stops waiting (the run goes on).
 */
async function waitForVerdict(ctx: CommandContext, run: SuiteRun, opts: RegressOptions): Promise<SuiteRun | null> {
  const api = ctx.connect();
  const started = ctx.runtime.now();
  const deadline = started + opts.timeout * 1000;
  const controller = new AbortController();
  const stop = ctx.runtime.onInterrupt(() => controller.abort());
  let last = '';
  try {
    for (let current = run; ; ) {
      if (current.status !== 'running') return current;
      const c = current.campaign;
      const line = `${c.state} ${doneRuns(c.runCounts)}/${c.totalRuns} done (${countsText(c.runCounts)})`;
      if (line !== last) ctx.stderr.write(`[${formatElapsed((ctx.runtime.now() - started) / 1000)}] ${line}${c.state === 'completed' || c.state === 'failed' || c.state === 'cancelled' ? '; judging' : ''}\n`);
      last = line;
      if (ctx.runtime.now() >= deadline) return null;
      await ctx.runtime.sleep(opts.interval * 1000, controller.signal);
      current = await api.call((cl) => cl.GET('/v1/suites/{name}/runs/{runId}', { params: { path: { name: opts.suite, runId: run.id } }, signal: controller.signal }));
    }
  } catch (err) {
    if (controller.signal.aborted) {
      throw new CliError(`stopped waiting; run ${run.id} of suite ${opts.suite} goes on`, EXIT.INTERRUPTED, { hint: `read its verdict later: erg regress --suite ${opts.suite} --wait` });
    }
    throw err;
  } finally {
    stop();
  }
}

/** What the reports say besides the verdict: why there is none, and where to look. */
function reportInput(run: SuiteRun): ReportInput {
  const notes = run.reasons.filter((r) => r === 'no_baseline').map((r) => SUITE_REASON_TEXT[r]!);
  if (run.sequential) notes.push(sequentialText(run.sequential));
  notes.push(`figures: erg results ${run.campaignId}`);
  return {
    suite: run.suite,
    campaignId: run.campaignId,
    baselineId: run.baselineId,
    verdict: run.verdict,
    note: notes.join('; '),
    run: { status: run.status, reasons: run.reasons },
  };
}

/**
 * What the judged campaign's results claim, for the reports. The verdict decides the exit code;
 * the claims only inform it, so a failure to read them is said in the reports, not raised.
 */
async function campaignClaims(ctx: CommandContext, campaignId: string): Promise<ReportClaims> {
  try {
    const results = await ctx.connect().call((c) => c.GET('/v1/campaigns/{id}/results', { params: { path: { id: campaignId } } }));
    const claims = results.claims;
    if (!claims) return { ok: true, summary: 'nothing to compare: fewer than 2 configurations have runs with both a time and an energy', distinguishable: false };
    return { ok: true, summary: claims.summary, distinguishable: claims.distinguishable };
  } catch (err) {
    return { ok: false, why: err instanceof Error ? err.message : String(err) };
  }
}

function writeReport(ctx: CommandContext, file: string, text: string, what: string): void {
  try {
    writeFileSync(path.resolve(ctx.runtime.cwd, file), text);
  } catch (err) {
    throw new CliError(`cannot write the ${what} report to ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, EXIT.UNDECIDED);
  }
  ctx.stderr.write(`Wrote ${what} report ${file}\n`);
}

/** The verdict for a person: one headline, then the decisive configuration × metric verdicts. */
function printHuman(ctx: CommandContext, run: SuiteRun): void {
  const paint = ctx.color;
  const word = run.status.toUpperCase();
  const painted = run.status === 'regressed' ? paint.red(word) : run.status === 'inconclusive' ? paint.yellow(word) : paint.green(word);
  const against = run.baselineId ? `against baseline ${run.baselineId}` : 'without a baseline';
  ctx.stdout.write(`Suite ${run.suite}, run ${run.id} (${run.trigger}, campaign ${run.campaignId}) ${against}: ${painted}\n`);
  for (const reason of run.reasons) ctx.stdout.write(`  ${reason}: ${SUITE_REASON_TEXT[reason] ?? reasonText(reason)}\n`);
  if (run.sequential) ctx.stdout.write(`  ${sequentialText(run.sequential)}\n`);
  const verdict = run.verdict;
  if (!verdict) return;
  const rows = orderedVerdicts(verdict).map(({ key, verdict: v }) => [
    key, v.metric, changeText(v), intervalText(v), formatP(v.p), `${v.nBaseline} vs ${v.nCandidate}`, v.status === 'inconclusive' ? `inconclusive (${v.reason ?? '?'})` : v.status,
  ]);
  if (rows.length === 0) return;
  ctx.stdout.write(
    renderTable(
      [{ header: 'CONFIGURATION' }, { header: 'METRIC' }, { header: 'CHANGE', align: 'right' }, { header: '95 % INTERVAL', align: 'right' }, { header: 'P', align: 'right' }, { header: 'N', align: 'right' }, { header: 'VERDICT' }],
      rows,
      { header: paint.bold },
    )
      .trimEnd()
      .replace(/^/gm, '  ') + '\n',
  );
  const p = verdict.policy;
  ctx.stdout.write(`  regression = change above +${(p.threshold * 100).toFixed(1)} % at one-sided Welch p < ${p.alpha}; ≥ ${p.minRepetitions} repetitions and CV ≤ ${(p.maxCv * 100).toFixed(0)} % per side\n`);
}

function reasonText(reason: string): string {
  return { too_few_repetitions: 'a configuration has fewer repetitions than the policy needs', too_noisy: 'a configuration varies more than the policy allows', no_verdicts: 'no configuration was measured in both campaigns' }[reason] ?? reason;
}

async function regress(ctx: CommandContext, opts: RegressOptions): Promise<ExitCode> {
  let run = await startOrLatest(ctx, opts).catch(undecided);
  if (run.status === 'running' && opts.wait) {
    const judged = await waitForVerdict(ctx, run, opts).catch(undecided);
    if (!judged) {
      throw new CliError(`run ${run.id} of suite ${opts.suite} has no verdict after ${formatElapsed(opts.timeout)}`, EXIT.UNDECIDED, {
        hint: `it goes on; read its verdict later with: erg regress --suite ${opts.suite} --wait (or raise --timeout)`,
      });
    }
    run = judged;
  }
  if (run.status === 'running') {
    if (opts.json) ctx.stdout.write(JSON.stringify(run, null, 2) + '\n');
    throw new CliError(`run ${run.id} of suite ${opts.suite} is still running (${countsText(run.campaign.runCounts, colors(false))})`, EXIT.UNDECIDED, {
      hint: `wait for its verdict: erg regress --suite ${opts.suite} --wait`,
    });
  }
  const input = reportInput(run);
  if (opts.junit || opts.markdown) input.claims = await campaignClaims(ctx, run.campaignId);
  if (opts.junit) writeReport(ctx, opts.junit, junitReport(input), 'JUnit');
  if (opts.markdown) writeReport(ctx, opts.markdown, markdownReport(input), 'Markdown');
  if (opts.json) ctx.stdout.write(JSON.stringify(run, null, 2) + '\n');
  else printHuman(ctx, run);
  return EXIT_OF[run.status];
}

export function registerRegress(program: Command, act: Act): void {
  withExamples(
    program
      .command('regress')
      .summary("a suite's regression verdict, for CI (exit 0 pass, 1 regressed, 2 inconclusive)")
      .description(
        "the regression verdict of a suite's latest run (or of a run it starts with --trigger): time and energy per configuration " +
          'against the baseline, with JUnit and Markdown reports for CI. Exit 0 pass or improved, 1 regressed, 2 inconclusive or ' +
          'could not decide (API unreachable, run could not start, still running, timed out)',
      )
      .requiredOption('--suite <name>', 'the suite')
      .option('--trigger', 'start a new run of the suite first (else: its latest run)')
      .option('--wait', 'wait until the run has a verdict, showing progress on stderr')
      .option('--timeout <duration>', 'with --wait: give up (exit 2) after this long, e.g. 90m, 6h', parseDuration, 6 * 3600)
      .option('--interval <seconds>', 'with --wait: seconds between polls', parseSeconds, 5)
      .option('--idempotency-key <key>', 'with --trigger: a retried CI job with the same key re-attaches to its run instead of starting another')
      .option('--junit <file>', 'write a JUnit XML report: one test case per configuration and metric')
      .option('--markdown <file>', 'write a Markdown summary for the CI job page')
      .option('--json', "print the API's JSON of the suite run instead of the summary")
      .addHelpText('after', '\nReports are written once the run has a verdict. See docs/regression-ci.md for GitLab CI and GitHub Actions jobs.'),
    'erg regress --suite nightly-gemm --trigger --wait --junit erg-junit.xml --markdown erg-summary.md',
    'erg regress --suite nightly-gemm            # the verdict of its latest (e.g. scheduled) run',
  ).action(
    act((ctx, cmd) => {
      const opts = cmd.opts<RegressOptions>();
      if (opts.idempotencyKey && !opts.trigger) throw usageError('--idempotency-key only goes with --trigger');
      return regress(ctx, opts);
    }),
  );
}
