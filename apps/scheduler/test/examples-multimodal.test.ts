// examples/multimodal/train_multimodal.py, the reference training workload, run for real on CPU with
// Debian's python3-torch (/usr/bin/python3; scripts/test.sh installs it): a few steps of a tiny
// model in each setting of the study's knobs — offloading, activation checkpointing, Ulysses
// sequence parallelism over 2 gloo ranks — checking what a campaign reads from it: the progress
// lines the GH200 example's metric regexes parse, the phase marks erg's Python module writes, and
// the bytes it says it moved, against the sizes of what it moves. The DeepSpeed path cannot run
// here (DeepSpeed is in neither registry this machine reaches): only the plain PyTorch path is run.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MARK_TOOL_FILES } from '@erg/agent';
import { decodeCampaignText } from '@erg/spec';
import { marksFileName, parseMarkLine, type MarkLine } from '@erg/spec/marks';
import { repoRoot } from '@erg/testkit';

const PYTHON = '/usr/bin/python3';
const SCRIPT = path.join(repoRoot(), 'examples', 'multimodal', 'train_multimodal.py');
const ERG_PY_DIR = path.dirname(MARK_TOOL_FILES.find((f) => f.relPath === 'python/erg.py')!.source);

// A tiny model: 16 image patches + 48 text tokens, hidden 32 over 4 heads, 2 blocks, 3 steps.
const DIMS = { seq: 64, hidden: 32, layers: 2, heads: 4, steps: 3 };
const TINY = [
  '--seq-length', String(DIMS.seq), '--hidden', String(DIMS.hidden), '--layers', String(DIMS.layers),
  '--heads', String(DIMS.heads), '--image-size', '16', '--patch', '4', '--vocab', '64',
  '--train-steps', String(DIMS.steps), '--threads', '1', '--seed', '7',
];

interface Run {
  stdout: string;
  marks: MarkLine[];
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function python(args: string[], marksDir: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [SCRIPT, ...args], {
      env: { PATH: process.env.PATH, PYTHONPATH: ERG_PY_DIR, PYTHONDONTWRITEBYTECODE: '1', ERG_MARKS_DIR: marksDir, OMP_NUM_THREADS: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** The script with `args` on `ranks` processes (one rendezvous), rank 0's stdout and the node's marks. */
async function train(args: string[], ranks = 1): Promise<Run> {
  const marksDir = mkdtempSync(path.join(os.tmpdir(), 'erg-mm-'));
  dirs.push(marksDir);
  const dist = ranks > 1 ? ['--world-size', String(ranks), '--master-addr', '127.0.0.1', '--master-port', String(await freePort())] : [];
  const results = await Promise.all(Array.from({ length: ranks }, (_, r) => python([...TINY, ...args, ...dist, ...(ranks > 1 ? ['--rank', String(r)] : [])], marksDir)));
  if (results.some((r) => r.stderr.includes("No module named 'torch'"))) {
    throw new Error(`${PYTHON} has no torch: apt-get install --no-install-recommends python3-torch (scripts/test.sh installs it for the unit project)`);
  }
  for (const r of results) expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  const files = readdirSync(marksDir);
  expect(files).toEqual([marksFileName(os.hostname())]);
  const marks = readFileSync(path.join(marksDir, files[0]!), 'utf8').trimEnd().split('\n').map((line) => {
    const mark = parseMarkLine(line);
    if (!mark) throw new Error(`not a mark line: ${JSON.stringify(line)}`);
    return mark;
  });
  return { stdout: results[0]!.stdout, marks };
}

/** `key=value` integers of the first line starting with `head`. */
function fields(stdout: string, head: string): Record<string, number> {
  const line = stdout.split('\n').find((l) => l.startsWith(`${head} `));
  if (!line) throw new Error(`no "${head}" line in:\n${stdout}`);
  return Object.fromEntries([...line.matchAll(/(\w+)=(\d+)(?=\s|$)/g)].map((m) => [m[1]!, Number(m[2])]));
}

/** Each step's `bytes_moved` line. */
function perStep(stdout: string): Record<string, number>[] {
  return stdout.split('\n').filter((l) => l.startsWith('bytes_moved step=')).map((l) => fields(l, 'bytes_moved'));
}

const losses = (stdout: string) => [...stdout.matchAll(/loss=([0-9.]+)/g)].map((m) => Number(m[1]));
const count = (marks: MarkLine[], kind: string, name: string) => marks.filter((m) => m.kind === kind && m.name === name).length;

/** The phases open at each `begin NAME` (outermost first), checking that phases nest. */
function enclosing(marks: MarkLine[], name: string): string[][] {
  const stack: string[] = [];
  const seen: string[][] = [];
  for (const m of marks) {
    if (m.kind === 'begin') {
      if (m.name === name) seen.push([...stack]);
      stack.push(m.name);
    } else if (m.kind === 'end') {
      expect(stack.pop()).toBe(m.name);
    }
  }
  expect(stack).toEqual([]);
  return seen;
}

// Every setting the test checks, two processes at a time (the suite runs on 2 cores beside another
// Jest worker; more at once would only oversubscribe them). Python's start with torch costs most of
// each run's ~1 s of CPU: six processes in all.
let runs: Record<'none' | 'again' | 'optimizer' | 'paramsBf16Ckpt' | 'sp2Ckpt', Run>;
beforeAll(async () => {
  const [none, again] = await Promise.all([train(['--offload', 'none']), train(['--offload', 'none'])]);
  const [optimizer, paramsBf16Ckpt] = await Promise.all([
    train(['--offload', 'optimizer']),
    train(['--offload', 'optimizer_params', '--precision', 'bf16', '--checkpointing']),
  ]);
  const sp2Ckpt = await train(['--sp', '2', '--checkpointing'], 2);
  runs = { none, again, optimizer, paramsBf16Ckpt, sp2Ckpt };
}, 90_000);

test('the script has no {{ or }} in it, so a campaign can stage it inline under files: (a template)', () => {
  const text = readFileSync(SCRIPT, 'utf8');
  expect(text.match(/\{\{|\}\}/g)).toBeNull();
});

test('prints DeepSpeed-style progress lines that the GH200 example’s metric regexes read: steps, samples/s, peak memory', () => {
  const decoded = decodeCampaignText(readFileSync(path.join(repoRoot(), 'examples', 'gh200-deepspeed-energy.yaml'), 'utf8'), 'yaml');
  if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues));
  const metrics = (decoded.raw as { metrics: { name: string; regex: string }[] }).metrics;
  const lastValue = (regex: string) => {
    const values = runs.none.stdout.split('\n').flatMap((line) => {
      const m = new RegExp(regex).exec(line);
      return m ? [Number(m[1])] : [];
    });
    return values.at(-1);
  };
  const read = Object.fromEntries(metrics.map((m) => [m.name, lastValue(m.regex)]));
  expect(read.steps).toBe(DIMS.steps);
  expect(read.samples_per_s).toBeGreaterThan(0);
  expect(read.max_mem_gb).toBeGreaterThan(0);
  expect(fields(runs.none.stdout, 'config')).toMatchObject({ sp: 1, dp: 1, world: 1, micro_batch: 1, seq_length: DIMS.seq, steps: DIMS.steps });
});

test('offload none moves no host bytes and marks forward, backward and the optimizer step once per step', () => {
  const { stdout, marks } = runs.none;
  expect(perStep(stdout)).toEqual(Array(DIMS.steps).fill({ step: expect.any(Number), h2d_bytes: 0, d2h_bytes: 0, alltoall_bytes: 0, allreduce_bytes: 0 }));
  for (const phase of ['forward', 'backward', 'optimizer_step']) expect(count(marks, 'begin', phase)).toBe(DIMS.steps);
  expect(count(marks, 'begin', 'offload_transfer')).toBe(0);
  expect(count(marks, 'begin', 'all_to_all')).toBe(0);
  expect(count(marks, 'step', 'step')).toBe(DIMS.steps);
  expect(marks.every((m) => m.writer === 'py')).toBe(true);
});

test('a run is deterministic under its seed: the same losses, the same bytes', () => {
  expect(losses(runs.none.stdout)).toHaveLength(DIMS.steps + 1);
  expect(losses(runs.again.stdout)).toEqual(losses(runs.none.stdout));
  expect(perStep(runs.again.stdout)).toEqual(perStep(runs.none.stdout));
  // and it trains: the class-structured synthetic data is learnable
  expect(losses(runs.none.stdout)[0]).toBeGreaterThan(0);
});

test('optimizer offload copies the optimizer state (2 fp32 Adam moments) to the device and back every step: 2× its bytes', () => {
  const { stdout, marks } = runs.optimizer;
  const config = fields(stdout, 'config');
  expect(config.param_bytes).toBe(config.params! * 4);
  expect(config.optimizer_state_bytes).toBe(config.params! * 8);
  for (const step of perStep(stdout)) {
    expect(step).toMatchObject({ h2d_bytes: config.optimizer_state_bytes, d2h_bytes: config.optimizer_state_bytes, alltoall_bytes: 0 });
  }
  expect(count(marks, 'begin', 'offload_transfer')).toBe(2 * DIMS.steps);
  // The offloaded state gives the same training as state kept on the device.
  expect(losses(stdout)).toEqual(losses(runs.none.stdout));
});

test('optimizer and parameter offload under bf16 also moves the bf16 parameters, and the fp32 master weights count as optimizer state', () => {
  const { stdout, marks } = runs.paramsBf16Ckpt;
  const config = fields(stdout, 'config');
  expect(config.param_bytes).toBe(config.params! * 2);
  expect(config.optimizer_state_bytes).toBe(config.params! * 12);
  const moved = config.optimizer_state_bytes! + config.param_bytes!;
  for (const step of perStep(stdout)) expect(step).toMatchObject({ h2d_bytes: moved, d2h_bytes: moved });
  // Parameters fetched before forward; state fetched before and written back after the step; parameters written back.
  expect(count(marks, 'begin', 'offload_transfer')).toBe(4 * DIMS.steps);
  expect(enclosing(marks, 'offload_transfer').every((open) => open.length === 0)).toBe(true);
});

test('Ulysses SP=2 over 2 gloo ranks with checkpointing: all-to-alls of (sp-1)/sp of q, k, v and the output per block, in forward, again in the recomputation and in backward; the same training as SP=1', () => {
  const { stdout, marks } = runs.sp2Ckpt;
  const config = fields(stdout, 'config');
  expect(config).toMatchObject({ sp: 2, dp: 1, world: 2 });
  // One all-to-all tensor on a rank: [seq/sp, batch, heads, head_dim] fp32 = seq/sp × hidden × 4 bytes; half of it leaves.
  const perExchange = ((DIMS.seq / 2) * DIMS.hidden * 4) / 2;
  // q, k, v and the output: in forward, in backward's recomputation of each block (checkpointing), and their gradients.
  const exchanges = DIMS.layers * 4 * 3;
  for (const step of perStep(stdout)) {
    // Gradients are summed over the ranks (each saw half the sequence), plus the 4-byte loss.
    expect(step).toMatchObject({ alltoall_bytes: exchanges * perExchange, allreduce_bytes: config.param_bytes! + 4, h2d_bytes: 0, d2h_bytes: 0 });
  }
  expect(fields(stdout, 'bytes_moved_total')).toMatchObject({ ranks: 2, alltoall_bytes: 2 * DIMS.steps * exchanges * perExchange });
  // Only the node's first rank marks (both ranks share this host): one rank's exchanges, a third in
  // forward and two thirds in backward (the recomputation runs there).
  expect(count(marks, 'begin', 'all_to_all')).toBe(exchanges * DIMS.steps);
  const open = enclosing(marks, 'all_to_all').map((o) => o[0]);
  expect(open.filter((p) => p === 'forward')).toHaveLength((exchanges / 3) * DIMS.steps);
  expect(open.filter((p) => p === 'backward')).toHaveLength(((2 * exchanges) / 3) * DIMS.steps);
  expect(count(marks, 'begin', 'grad_allreduce')).toBe(DIMS.steps);
  // The sequence split is exact: the same losses as one rank over the whole sequence (float sums reorder).
  const one = losses(runs.none.stdout);
  losses(stdout).forEach((l, i) => expect(l).toBeCloseTo(one[i]!, 4));
});
