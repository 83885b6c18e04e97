// `erg report --format pdf`: the HTML report printed by a headless Chromium (Debian's chromium, or
// any Chrome the user names with ERG_CHROMIUM). A browser prints the report's SVG as vectors and
// honours its print styles; erg ships no PDF writer of its own.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CliError, EXIT } from '../errors';

/** Where Chromium or Chrome usually is, in the order tried after ERG_CHROMIUM. */
export const CHROMIUM_CANDIDATES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'] as const;

/** How long one print may take: Chromium starts in a second or two; a report prints in a few more. */
export const PRINT_TIMEOUT_MS = 120_000;

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The browser to print with: ERG_CHROMIUM when set (it must exist), else the first candidate on PATH; null: none. */
export function findChromium(env: NodeJS.ProcessEnv): string | null {
  const named = env.ERG_CHROMIUM;
  if (named) {
    if (executable(named)) return named;
    throw new CliError(`ERG_CHROMIUM is ${named}, which is not an executable file`, EXIT.UNDECIDED, { hint: 'point it at chromium or chrome, or unset it to look on PATH' });
  }
  const dirs = (env.PATH ?? '/usr/bin:/bin').split(path.delimiter).filter(Boolean);
  for (const name of CHROMIUM_CANDIDATES) for (const dir of dirs) if (executable(path.join(dir, name))) return path.join(dir, name);
  return null;
}

export function noChromiumError(): CliError {
  return new CliError(`no Chromium or Chrome found to print the PDF (looked for ERG_CHROMIUM, then ${CHROMIUM_CANDIDATES.join(', ')} on PATH)`, EXIT.UNDECIDED, {
    hint: 'install one (Debian: apt-get install chromium) or set ERG_CHROMIUM=/path/to/chrome; `erg report CAMPAIGN --format html` needs no browser',
  });
}

/**
 * Prints `html` to PDF with the browser at `chromium` and returns the PDF's bytes. A profile of its
 * own per print (a user's running Chrome is left alone) and no background connections: the report
 * loads nothing, and the browser must not try to either.
 */
export async function printPdf(chromium: string, html: string, options: { timeoutMs?: number } = {}): Promise<Buffer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'erg-report-'));
  try {
    const page = path.join(dir, 'report.html');
    const pdf = path.join(dir, 'report.pdf');
    await writeFile(page, html);
    const args = [
      '--headless', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
      // Chromium refuses to run as root inside its sandbox (containers, CI).
      ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
      `--user-data-dir=${path.join(dir, 'profile')}`, '--no-pdf-header-footer', `--print-to-pdf=${pdf}`, pathToFileURL(page).href,
    ];
    const { code, stderr } = await run(chromium, args, options.timeoutMs ?? PRINT_TIMEOUT_MS);
    const bytes = await readFile(pdf).catch(() => null);
    if (code !== 0 || bytes === null || bytes.subarray(0, 5).toString() !== '%PDF-') {
      const tail = stderr.trim().split('\n').slice(-3).join(' / ');
      throw new CliError(`${chromium} did not print the report (${code === null ? 'timed out' : `exit ${code}`})${tail ? `: ${tail}` : ''}`, EXIT.UNDECIDED, {
        hint: 'try `--format html` and print it from a browser, or set ERG_CHROMIUM to another Chromium',
      });
    }
    return bytes;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs the browser; code null: killed at the deadline. */
function run(file: string, args: string[], timeoutMs: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: -1, stderr: err.message });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: signal ? null : code, stderr });
    });
  });
}
