// Test doubles for the CLI's runtime: captured output, a fake clock, a scripted API.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli, type CliRuntime } from '@erg/cli';
import { repoRoot } from '@erg/testkit';

export interface Captured {
  stdout: string;
  stderr: string;
  code: number;
  /** Requests the scripted API received, in order. */
  requests: RecordedRequest[];
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  body: string;
}

/** What the scripted API answers: a status and a JSON body (or a thrown error, for "no answer"). */
export type Handler = (req: RecordedRequest) => { status: number; body?: unknown } | Promise<{ status: number; body?: unknown }>;

export interface FakeOptions {
  env?: Record<string, string>;
  cwd?: string;
  tty?: boolean;
  columns?: number;
  stdin?: string;
  api?: Handler;
  /** Called by runtime.sleep; lets a test act between polls (e.g. press Ctrl-C). */
  onSleep?: (ms: number, interrupt: () => void) => void;
  /** The fake clock's start (ms since the epoch). */
  now?: number;
}

const tempDirs: string[] = [];
// Every test file that uses these helpers removes its temp folders when it is done.
afterAll(() => {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A folder of its own under the system's temp dir, removed after the test file. */
export function tempDir(prefix = 'erg-cli-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** A runtime whose clock advances only when the CLI sleeps, and whose API is `options.api`. */
export function fakeRuntime(options: FakeOptions = {}): { runtime: CliRuntime; captured: Captured } {
  const captured: Captured = { stdout: '', stderr: '', code: -1, requests: [] };
  let now = options.now ?? Date.parse('2026-11-30T12:00:00Z');
  const interrupts = new Set<() => void>();
  const interrupt = () => {
    for (const handler of interrupts) handler();
  };
  const fetchImpl: typeof globalThis.fetch = async (input, init) => {
    const request = input instanceof Request ? input : new Request(input, init);
    if (init?.signal?.aborted) throw Object.assign(new Error('aborted'), { name: 'AbortError' });
    const url = new URL(request.url);
    const recorded: RecordedRequest = { method: request.method, path: url.pathname, query: url.searchParams, headers: request.headers, body: await request.text() };
    captured.requests.push(recorded);
    if (!options.api) throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    const answer = await options.api(recorded);
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), { status: answer.status, headers: { 'content-type': 'application/json' } });
  };
  const runtime: CliRuntime = {
    stdout: { write: (t) => void (captured.stdout += t), isTTY: options.tty ?? false, columns: options.columns ?? 200 },
    stderr: { write: (t) => void (captured.stderr += t), isTTY: false },
    readStdin: async () => options.stdin ?? '',
    stdinIsTTY: false,
    env: { HOME: '/nonexistent-home', ...options.env },
    cwd: options.cwd ?? '/',
    fetch: fetchImpl,
    now: () => now,
    sleep: async (ms, signal) => {
      options.onSleep?.(ms, interrupt);
      if (signal?.aborted) throw Object.assign(new Error('aborted'), { name: 'AbortError' });
      now += ms;
    },
    onInterrupt: (handler) => {
      interrupts.add(handler);
      return () => void interrupts.delete(handler);
    },
  };
  return { runtime, captured };
}

/** Runs `erg <argv>` against a fake runtime, with an API at http://api.test and a token. */
export async function erg(argv: string[], options: FakeOptions = {}): Promise<Captured> {
  const env = { ERG_API_URL: 'http://api.test', ERG_TOKEN: 'erg_test-token-0123456789', ...options.env };
  const { runtime, captured } = fakeRuntime({ ...options, env });
  captured.code = await runCli(argv, runtime);
  return captured;
}

/** A router for the scripted API: `METHOD /path` → answer; anything else 404 like the API. */
export function routes(table: Record<string, Handler | { status: number; body?: unknown }>): Handler {
  return (req) => {
    const entry = table[`${req.method} ${req.path}`];
    if (!entry) return { status: 404, body: { error: { code: 'ERG_NOT_FOUND', message: `no route ${req.method} ${req.path}` } } };
    return typeof entry === 'function' ? entry(req) : entry;
  };
}

/** RFC 4180 parser for checking CSV output: quoted fields, doubled quotes, CRLF. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') {
        quoted = false;
      } else {
        field += ch;
      }
    } else if (ch === '"') {
      quoted = true;
    } else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else {
      field += ch;
    }
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

export const CAMPAIGN_ID = '7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f';
export const RUN_ID = '6f1c2a9e-0b7d-4c1e-9a55-3f2d8e4b7c10';
// eslint-disable-next-line no-control-regex
export const ANSI = /\x1b\[/;

/** The built CLI, as users run it. */
export const CLI_MAIN = path.join(repoRoot(), 'apps', 'cli', 'dist', 'main.js');

export function requireBuiltCli(): void {
  if (!existsSync(CLI_MAIN)) throw new Error(`${CLI_MAIN} not found: build first (npx turbo run build)`);
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built `erg` (`script`: dist/main.js unless told, e.g. a copy of the bundle) as a child
 * process with only PATH inherited plus `env` (no FORCE_COLOR or other settings from the test's own
 * environment); killed at its deadline.
 */
export function spawnCli(args: string[], options: { cwd: string; env: Record<string, string>; timeoutMs?: number; script?: string }): Promise<CliResult> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.script ?? CLI_MAIN, ...args], { cwd: options.cwd, env: { PATH: process.env.PATH ?? '', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`erg ${args.join(' ')} did not end within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
