// erg export CAMPAIGN [--output FILE]; erg verify BUNDLE
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { bundleFileName } from '@erg/evidence/layout';
import { BundleUnreadableError, openEvidenceBundle, verifyBundle, type Difference, type VerifyReport } from '@erg/evidence/verify';
import { formatBytes, plural } from '@erg/format';
import { REQUEST_TIMEOUT_MS, type CommandContext } from '../context';
import { CliError, EXIT, type ExitCode } from '../errors';
import { withExamples, type Act } from './register';
import { parseId } from './args';

/**
 * Downloads the campaign's evidence bundle to `output` (default: erg-evidence-<id>.tar here). The
 * bytes go to `<output>.part`, renamed when the last one is in: a download cut short leaves no
 * file that looks like a bundle. The API may take a while per run; no byte for
 * REQUEST_TIMEOUT_MS gives up.
 */
async function exportBundle(ctx: CommandContext, id: string, opts: { output?: string }): Promise<ExitCode> {
  const file = path.resolve(ctx.runtime.cwd, opts.output ?? bundleFileName(id));
  const part = `${file}.part`;
  const controller = new AbortController();
  let idle: NodeJS.Timeout | undefined;
  const wait = () => {
    clearTimeout(idle);
    idle = setTimeout(() => controller.abort(new Error(`no data from the API for ${REQUEST_TIMEOUT_MS / 1000} s`)), REQUEST_TIMEOUT_MS);
  };
  const stop = ctx.runtime.onInterrupt(() => controller.abort(new Error('interrupted')));
  let bytes = 0;
  try {
    wait();
    const response = await ctx.connect().download(`/v1/campaigns/${id}/export`, controller.signal);
    if (!response.body) throw new CliError('the API answered without a bundle', EXIT.UNDECIDED);
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        wait();
        done(null, chunk);
      },
    });
    await pipeline(Readable.fromWeb(response.body as never), counted, createWriteStream(part));
    await rename(part, file);
  } catch (err) {
    await rm(part, { force: true });
    if (controller.signal.aborted && (controller.signal.reason as Error | undefined)?.message === 'interrupted') return EXIT.INTERRUPTED;
    if (err instanceof CliError) throw err;
    const why = controller.signal.aborted ? (controller.signal.reason as Error).message : (err as Error).message;
    throw new CliError(`the bundle of campaign ${id} was cut short: ${why}`, EXIT.UNDECIDED, { hint: 'run the command again; if it persists, look at the API log' });
  } finally {
    clearTimeout(idle);
    stop();
  }
  ctx.stdout.write(`${path.relative(ctx.runtime.cwd, file) || file}: evidence bundle of campaign ${id} (${formatBytes(bytes)}); check it with \`erg verify ${opts.output ?? bundleFileName(id)}\`\n`);
  return EXIT.OK;
}

/** Recomputes every figure of the bundle at `file` from the bundle alone; 0: all equal, 1: something differs, 2: not a bundle. */
async function verify(ctx: CommandContext, file: string): Promise<ExitCode> {
  let report: VerifyReport;
  try {
    report = verifyBundle(await openEvidenceBundle(path.resolve(ctx.runtime.cwd, file)));
  } catch (err) {
    if (!(err instanceof BundleUnreadableError)) throw err;
    throw new CliError(`${file} cannot be read as an evidence bundle: ${err.message}`, EXIT.UNDECIDED, { hint: 'erg export CAMPAIGN writes one' });
  }
  const m = report.manifest;
  ctx.stdout.write(`${file}: evidence bundle of campaign ${m.campaignId}, written by erg ${m.ergVersion} at ${m.createdAt}: ${plural(m.files.length, 'file')}, ${plural(m.runs.length, 'run')}\n`);
  const { differences } = report;
  const hashes = differences.filter((d) => d.path === 'sha256' || d.path === '').length;
  ctx.stdout.write(`  sha256: ${hashes === 0 ? `every file matches ${'manifest.json'}` : `${plural(hashes, 'file')} missing, unlisted or changed`}\n`);
  ctx.stdout.write(`  figures: ${plural(report.runsRecomputed, 'run')} recomputed from their inputs and samples\n`);
  ctx.stdout.write(`  results: ${report.resultsRecomputed ? 'recomputed from the recomputed figures' : 'not recomputed (see below)'}\n`);
  if (differences.length === 0) {
    ctx.stdout.write('verified: every file matches its sha256, and every figure recomputed from the bundle equals the stored one exactly\n');
    return EXIT.OK;
  }
  for (const d of differences) ctx.stdout.write(`${differenceLine(d)}\n`);
  ctx.stderr.write(`erg: ${file} does not verify: ${plural(differences.reduce((n, d) => n + (d.more ?? 1), 0), 'difference')}\n`);
  return EXIT.BAD;
}

/** `file (run R) path: stored S, recomputed C`, values as JSON (every digit of a number). */
function differenceLine(d: Difference): string {
  const show = (v: unknown) => (v === undefined ? '(none)' : typeof v === 'string' ? v : JSON.stringify(v));
  const where = `${d.file}${d.run && !d.file.includes(d.run) ? ` (run ${d.run})` : ''}${d.path === '' ? '' : ` ${d.path}`}`;
  return `  ${where}: stored ${show(d.stored)}, recomputed ${show(d.recomputed)}`;
}

export function registerEvidence(program: Command, act: Act): void {
  withExamples(
    program
      .command('export')
      .summary("download a campaign's evidence bundle")
      .description(
        "download a campaign's evidence bundle, one tar archive: the spec as submitted, every run with its events, fingerprints, power records, figure inputs, " +
          'raw samples per node (CSV.gz, and all of them as samples.parquet), marks and stored figures, the results, and a manifest with the sha256 of every file',
      )
      .argument('<campaign>', 'campaign id', parseId('campaign'))
      .option('-o, --output <file>', 'where to write it (default: erg-evidence-<campaign>.tar here)'),
    'erg export 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f',
    'erg export 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f --output study.tar && erg verify study.tar',
  ).action(act((ctx, cmd) => exportBundle(ctx, cmd.processedArgs[0] as string, cmd.opts())));

  withExamples(
    program
      .command('verify')
      .summary('check an evidence bundle offline: hashes, and every figure recomputed')
      .description(
        "check an evidence bundle from itself alone, offline: every file against the manifest's sha256, every run's figures recomputed from its inputs and samples " +
          "and compared exactly with its stored figures, the campaign's results recomputed from those and compared exactly with results.json; prints what differs",
      )
      .argument('<bundle>', 'the archive erg export wrote (.tar, or .tar.gz)')
      .addHelpText('after', '\nExit codes: 0 everything matches, 1 something differs (each difference printed), 2 the file is not a bundle erg can read.'),
    'erg verify erg-evidence-7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f.tar',
  ).action(act((ctx, cmd) => verify(ctx, cmd.processedArgs[0] as string)));
}
