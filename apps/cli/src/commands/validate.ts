// erg validate FILE: the API's own validation, offline.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { decodeCampaignText, maxRunsOf, type CampaignSpec } from '@erg/spec';
import { validateCampaign } from '@erg/sweep';
import { nextRunAt, validateSuite } from '@erg/suites/validate';
import type { CommandContext } from '../context';
import { CliError, EXIT, usageError, type ExitCode } from '../errors';
import { formatCount, plural } from '@erg/format';
import { withExamples, type Act } from './register';

/** The API's default ERG_MAX_RUNS; a server may be configured with another limit. */
export const DEFAULT_MAX_RUNS = 100_000;

/** YAML for .yaml/.yml, JSON for everything else (what `erg submit` sends as its Content-Type too). */
export function specFormat(file: string): 'yaml' | 'json' {
  return /\.ya?ml$/i.test(file) ? 'yaml' : 'json';
}

/** Reads a spec file, or a usage error naming it. */
export function readSpecFile(file: string, cwd: string): string {
  try {
    return readFileSync(path.resolve(cwd, file), 'utf8');
  } catch (err) {
    throw usageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function parseMaxRuns(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number ≥ 1');
  return n;
}

/** A suite file is a mapping with a `campaign` key (docs/suites.md); anything else is a campaign spec. */
function isSuite(raw: unknown): boolean {
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw) && 'campaign' in raw;
}

function validateSuiteFile(ctx: CommandContext, file: string, raw: unknown, opts: { maxRuns: number }): ExitCode {
  const result = validateSuite(raw, { maxRuns: opts.maxRuns });
  if (!result.ok) {
    throw new CliError(`${file} is not a valid suite (${plural(result.issues.length, 'problem')}):`, EXIT.BAD, {
      details: result.issues.map((i) => `${i.path}: ${i.message}`),
      hint: 'see docs/suites.md for a suite\'s fields and docs/campaign-spec.md for its campaign',
    });
  }
  const { fields, spec, runs } = result.suite;
  const schedule = fields.schedule;
  const next = schedule ? nextRunAt(schedule.cron, schedule.timezone, new Date(ctx.runtime.now())) : null;
  const when = schedule ? `runs at "${schedule.cron}" (${schedule.timezone}), next ${next?.toISOString() ?? 'never'}` : 'runs when triggered';
  ctx.stdout.write(`${file}: valid suite ${fields.name}: each run submits ${formatCount(runs)} ${runs === 1 ? 'run' : 'runs'} on cluster ${spec.cluster}; ${when}\n`);
  return EXIT.OK;
}

async function validate(ctx: CommandContext, file: string, opts: { maxRuns: number }): Promise<ExitCode> {
  const text = readSpecFile(file, ctx.runtime.cwd);
  const decoded = decodeCampaignText(text, specFormat(file));
  if (decoded.ok && isSuite(decoded.raw)) return validateSuiteFile(ctx, file, decoded.raw, opts);
  const result = decoded.ok ? validateCampaign(decoded.raw, { maxRuns: opts.maxRuns }) : decoded;
  if (!result.ok) {
    throw new CliError(`${file} is not a valid campaign spec (${plural(result.issues.length, 'problem')}):`, EXIT.BAD, {
      details: result.issues.map((i) => `${i.path}: ${i.message}`),
      hint: 'see docs/campaign-spec.md for every field and rule',
    });
  }
  const configurations = result.configurations.length;
  const target = result.spec.execution === 'import' ? 'to import' : `on cluster ${result.spec.cluster}`;
  ctx.stdout.write(`${file}: valid. ${runsText(configurations, result.spec)} ${target}\n`);
  return EXIT.OK;
}

/** What a campaign will run under its strategy, in words. */
function runsText(configurations: number, spec: CampaignSpec): string {
  const runs = (n: number) => `${formatCount(n)} ${n === 1 ? 'run' : 'runs'}`;
  const s = spec.strategy;
  if (s.kind === 'search') return `a search of ${plural(configurations, 'configuration')}: at most ${runs(s.budget.maxRuns)}, ${plural(s.repetitions, 'run')} per configuration tried`;
  if (s.kind === 'adaptive') {
    return `${plural(configurations, 'configuration')} × ${s.minRepetitions}–${s.maxRepetitions} repetitions (adaptive) = ${formatCount(configurations * s.minRepetitions)} to ${runs(maxRunsOf(s, configurations, spec.repetitions))}`;
  }
  return `${plural(configurations, 'configuration')} × ${plural(spec.repetitions, 'repetition')} = ${runs(configurations * spec.repetitions)}`;
}

export function registerValidate(program: Command, act: Act): void {
  withExamples(
    program
      .command('validate')
      .summary('check a campaign spec or a suite file offline')
      .description('check a campaign spec (or a suite file: one with a `campaign` key) offline with the same rules as the API, and say how many runs it expands to')
      .argument('<file>', 'campaign spec or suite, YAML (.yaml, .yml) or JSON')
      .option('--max-runs <n>', 'the size limit to check against (the API\'s ERG_MAX_RUNS)', parseMaxRuns, DEFAULT_MAX_RUNS)
      .addHelpText('after', '\nA valid spec can still be refused by the API when its cluster is not registered (checked only there).'),
    'erg validate examples/quickstart.yaml',
  ).action(act((ctx, cmd) => validate(ctx, cmd.processedArgs[0] as string, cmd.opts())));
}
