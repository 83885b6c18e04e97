// erg report CAMPAIGN [--format html|pdf] [--out FILE]
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import type { CommandContext } from '../context';
import { reportHtml, type ReportInput } from '../study-report/html';
import { findChromium, noChromiumError, printPdf } from '../study-report/pdf';
import { withExamples, type Act } from './register';
import { parseChoice, parseId } from './args';

export const ReportFormat = z.enum(['html', 'pdf']);
export type ReportFormat = z.infer<typeof ReportFormat>;

/** The version of erg that writes the report (the CLI's, as `erg --version` prints it). */
function ergVersion(): string {
  return (require('../../package.json') as { version: string }).version;
}

/** What the report is made of, read from the API: the campaign with its spec, its results, and the results per kind of machine. */
export async function reportInput(ctx: CommandContext, id: string): Promise<ReportInput> {
  const api = ctx.connect();
  const [campaign, results, byFingerprint] = await Promise.all([
    api.call((c) => c.GET('/v1/campaigns/{id}', { params: { path: { id } } })),
    api.call((c) => c.GET('/v1/campaigns/{id}/results', { params: { path: { id } } })),
    api.call((c) => c.GET('/v1/campaigns/{id}/results', { params: { path: { id }, query: { groupBy: 'fingerprint' } } })),
  ]);
  return { campaign, results, byFingerprint, ergVersion: ergVersion(), generatedAt: new Date(ctx.runtime.now()).toISOString() };
}

/** Writes the report to `out` (default erg-report-<campaign>.<format> here; `-`: stdout, HTML only). */
async function writeReport(ctx: CommandContext, id: string, opts: { format: ReportFormat; out?: string }): Promise<void> {
  // Look for the browser before any request: a PDF without one fails at once, saying what to install.
  const chromium = opts.format === 'pdf' ? findChromium(ctx.runtime.env) : null;
  if (opts.format === 'pdf' && chromium === null) throw noChromiumError();
  const html = reportHtml(await reportInput(ctx, id));
  if (opts.out === '-' && opts.format === 'html') return void ctx.stdout.write(html);
  const bytes = chromium ? await printPdf(chromium, html) : Buffer.from(html);
  const out = opts.out && opts.out !== '-' ? opts.out : `erg-report-${id}.${opts.format}`;
  await writeFile(path.resolve(ctx.runtime.cwd, out), bytes);
  ctx.stdout.write(`${out}: study report of campaign ${id} (${opts.format.toUpperCase()}, ${Math.max(1, Math.round(bytes.length / 1024))} KiB)\n`);
}

export function registerReport(program: Command, act: Act): void {
  withExamples(
    program
      .command('report')
      .summary("a campaign's study report: figures with intervals, validity, provenance, spec (HTML or PDF)")
      .description(
        "a campaign's study report as one self-contained file: the Pareto plot of mean time against mean energy with 95 % intervals and the front, energy by phase, " +
          'data movement against energy, parameter effects (claims, node effects, marginal means), the validity summary, provenance (fingerprints, power state, ' +
          "erg version, run order and seed) and the spec; figures are SVG, each captioned with its n and interval. PDF is printed by a headless Chromium (ERG_CHROMIUM, else chromium or chrome on PATH)",
      )
      .argument('<campaign>', 'campaign id', parseId('campaign'))
      .option('--format <format>', `${ReportFormat.options.join(' or ')}`, parseChoice(ReportFormat), 'html')
      .option('-o, --out <file>', 'where to write it (default: erg-report-<campaign>.<format> here; - writes HTML to stdout)'),
    'erg report 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f',
    'erg report 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f --format pdf --out study.pdf',
    'erg report 7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f --out - > study.html',
  ).action(act((ctx, cmd) => writeReport(ctx, cmd.processedArgs[0] as string, cmd.opts())));
}
