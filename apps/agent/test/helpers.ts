import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseCommandLine, type AgentConfig } from '../src/config';
import { createLogger } from '../src/log';
import type { DetectContext } from '../src/sources/types';
import type { TelemetryBatch } from '../src/wire';

// Shared by the agent's tests. Fixture directories stand in for hardware (see fixtures/README.md).

export const AGENT_DIR = path.resolve(__dirname, '..');
export const FIXTURES = path.join(__dirname, 'fixtures');
export const REPO_NODE_MODULES = path.resolve(AGENT_DIR, '..', '..', 'node_modules');

const made: string[] = [];
/** A fresh temporary directory, removed by `cleanupTempDirs` (call it in afterAll). */
export function tempDir(prefix = 'erg-agent-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}
export function cleanupTempDirs(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** Copies fixture directories into one temporary root (e.g. hwmon and RAPL trees into one sysfs). */
export function copyFixtures(...names: string[]): string {
  const dir = tempDir();
  for (const name of names) fs.cpSync(path.join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

/** Rewrites a fixture file in place (same inode: the agent keeps sysfs files open and re-reads them). */
export function rewrite(file: string, content: string | number): void {
  fs.writeFileSync(file, `${content}\n`);
}

/** A full agent configuration from command-line style options (defaults filled in by the real schema). */
export function configFrom(options: Record<string, string | number>): AgentConfig {
  const argv = ['--run-id', randomUUID(), '--spool-dir', '/nonexistent-spool', '--nvml-lib', '/nonexistent/libnvidia-ml.so.1', '--nvidia-smi', '/nonexistent/nvidia-smi', '--dcgmi', '/nonexistent/dcgmi', '--perf', '/nonexistent/perf'];
  for (const [k, v] of Object.entries(options)) argv.push(`--${k}`, String(v));
  const parsed = parseCommandLine(argv, {});
  if (parsed.help) throw new Error('unexpected --help');
  return parsed.config;
}

export function detectContext(options: Record<string, string | number>): DetectContext & { notes: string[] } {
  const notes: string[] = [];
  return { config: configFrom(options), log: createLogger('silent'), note: (m) => notes.push(m), notes };
}

/** A sink that records every pushed sample, for sources tested on their own. */
export function recordingSink() {
  const samples: { local: number; t: number; v: number }[] = [];
  const dropped: { local: number; reason: string }[] = [];
  return {
    samples,
    dropped,
    push: (local: number, t: number, v: number) => void samples.push({ local, t, v }),
    drop: (local: number, reason: string) => void dropped.push({ local, reason }),
    clear: () => void samples.splice(0),
  };
}

let bundlePromise: Promise<string> | undefined;
/**
 * Builds the bundle into a temporary directory once per test file (esbuild, ~0.1 s). It lies outside the
 * repository, so — as on a compute node — no node_modules (and no koffi) is reachable from it.
 */
export function bundle(): Promise<string> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { buildBundle } = require(path.join(AGENT_DIR, 'build-bundle.js')) as { buildBundle(out: string): Promise<string> };
  bundlePromise ??= buildBundle(path.join(tempDir('erg-agent-bundle-'), 'erg-agent.js'));
  return bundlePromise;
}

export interface AgentProcess {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
  stdout(): string;
}

/** Starts the bundled agent as a real process. */
export async function spawnAgent(args: string[], env: NodeJS.ProcessEnv = {}): Promise<AgentProcess> {
  const file = await bundle();
  const child = spawn(process.execPath, [file, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, ...env } });
  let err = '';
  let out = '';
  child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, exited, stderr: () => err, stdout: () => out };
}

/** Common agent arguments: fixtures for sensors (GH200 hwmon + fixture procfs), nothing else autodetected. */
export function agentArgs(spoolDir: string, sysfsRoot: string, extra: string[] = []): string[] {
  return [
    '--run-id', RUN_ID, '--spool-dir', spoolDir, '--node', 'node1', '--sysfs-root', sysfsRoot,
    '--procfs-root', path.join(FIXTURES, 'procfs'), '--nvml-lib', '/nonexistent/libnvidia-ml.so.1', '--nvidia-smi', '/nonexistent/nvidia-smi', '--dcgmi', '/nonexistent/dcgmi', '--perf', '/nonexistent/perf',
    ...extra,
  ];
}
export const RUN_ID = '6f1c2a3e-8b4d-4c5e-9f60-7a8b9c0d1e2f';

/** The spool's batches, parsed (a torn last line, if any, is left out). */
export function readSpool(spoolDir: string, node = 'node1'): TelemetryBatch[] {
  const file = path.join(spoolDir, `${node}.spool`);
  if (!fs.existsSync(file)) return [];
  const text = fs.readFileSync(file, 'utf8');
  const lines = text.split('\n');
  lines.pop(); // after the last newline: empty, or a line still being written
  return lines.map((l) => JSON.parse(l) as TelemetryBatch);
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawLength: number;
  batch: TelemetryBatch;
  status: number;
  /** The client's port: the same one across requests means the connection was kept alive. */
  remotePort: number;
}

/**
 * A local HTTP server standing in for erg's API in the agent's own unit tests: records every
 * request and answers with `respond` (default 200 { accepted, duplicate } by (node, seq)).
 */
export async function fakeApi() {
  const requests: RecordedRequest[] = [];
  const stored = new Set<string>();
  let respond: (batch: TelemetryBatch, n: number) => { status: number; body: unknown } | 'hang' = () => ({ status: 200, body: null });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const text = req.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(raw).toString('utf8') : raw.toString('utf8');
      const batch = JSON.parse(text) as TelemetryBatch;
      const answer = respond(batch, requests.length);
      if (answer === 'hang') {
        requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawLength: raw.length, batch, status: 0, remotePort: req.socket.remotePort ?? 0 });
        return;
      }
      let { status, body } = answer;
      if (status === 200 && body === null) {
        const key = `${batch.node}/${batch.seq}`;
        body = { accepted: batch.samples.reduce((s, c) => s + c.t.length, 0), duplicate: stored.has(key) };
        stored.add(key);
      }
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawLength: raw.length, batch, status, remotePort: req.socket.remotePort ?? 0 });
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    /** Seqs acknowledged (200) so far, in arrival order. */
    acked: () => requests.filter((r) => r.status === 200).map((r) => r.batch.seq),
    setRespond(fn: typeof respond) {
      respond = fn;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function writeToken(dir: string, token = 'run-token-abc'): string {
  const file = path.join(dir, 'token');
  fs.writeFileSync(file, `${token}\n`);
  return file;
}
