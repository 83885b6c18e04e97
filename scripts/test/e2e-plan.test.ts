// The e2e plan (scripts/e2e-plan.js) is the one list of where each end-to-end file runs. These
// tests keep it true to the tree: every e2e file is planned, nothing planned is gone, and a file
// that drives sbatch, squeue, sacct or scancel — itself, through the harness's Slurm helpers, or
// through a bench/ script it runs — runs on every Slurm version, not once.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { E2E_PLAN, SERIES, SLOTS, SLURM_VERSIONS, planFiles } = require('../e2e-plan.js') as {
  E2E_PLAN: Record<string, { on: string; slot: string; minutes: number; why: string }>;
  SERIES: string[];
  SLURM_VERSIONS: string[];
  SLOTS: string[];
  planFiles(series: string, slot: string, options?: { matrix?: boolean }): string[];
};

const root = path.resolve(__dirname, '..', '..');

/** Every *.e2e.test.ts under apps/ and packages/, as a path from the repository root. */
function e2eFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist') continue;
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.e2e.test.ts')) found.push(rel);
    }
  };
  for (const top of ['apps', 'packages', 'deploy', 'scripts', 'bench']) if (existsSync(path.join(root, top))) walk(top);
  return found.sort();
}

// Words that mean the file talks to Slurm: its commands, the SlurmClient, and the e2e harness's
// helpers that ask Slurm what it holds (apps/scheduler/test/harness.ts).
const SLURM_DRIVING = /\b(sbatch|squeue|sacct|scancel)\b|\bSlurmClient\b|\bslurmJobsFor\b|\bexpectOneJobPerRun\b|\bwaitForFirstJob\b|\.slurm\.(sacct|squeue|scancel|submit)/;

/** The bench/ scripts a test file runs (`bench/x.js` or path.join(..., 'bench', 'x.js')), with the bench/lib modules they require. */
function benchSources(source: string): string[] {
  const scripts = new Set<string>();
  for (const m of source.matchAll(/bench\/([\w-]+\.js)|'bench',\s*'([\w-]+\.js)'/g)) scripts.add(path.join('bench', m[1] ?? m[2]!));
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file) || !existsSync(path.join(root, file))) return;
    seen.add(file);
    const text = readFileSync(path.join(root, file), 'utf8');
    for (const m of text.matchAll(/require\('(\.\.?\/[\w./-]+)'\)/g)) {
      const target = path.normalize(path.join(path.dirname(file), m[1]!.endsWith('.js') ? m[1]! : `${m[1]}.js`));
      if (target.startsWith('bench/')) visit(target);
    }
  };
  for (const s of scripts) visit(s);
  return [...seen];
}

/** Why a file counts as Slurm-driving: the first matching line, or null. */
function slurmEvidence(file: string): string | null {
  for (const f of [file, ...benchSources(readFileSync(path.join(root, file), 'utf8'))]) {
    const line = readFileSync(path.join(root, f), 'utf8').split('\n').find((l) => SLURM_DRIVING.test(l));
    if (line !== undefined) return `${f}: ${line.trim()}`;
  }
  return null;
}

describe('the e2e plan (scripts/e2e-plan.js)', () => {
  test('plans every e2e file in the tree, and only those', () => {
    expect(Object.keys(E2E_PLAN).sort()).toEqual(e2eFiles());
  });

  test('every file that drives sbatch, squeue, sacct or scancel runs on every Slurm version', () => {
    const once = Object.entries(E2E_PLAN).filter(([, p]) => p.on !== 'every').map(([f]) => f);
    const offending = once.map((f) => [f, slurmEvidence(f)] as const).filter(([, why]) => why !== null);
    // Each entry names the file and the line that makes it Slurm-facing.
    expect(offending).toEqual([]);
  });

  test('the rule itself sees what it must: the harness helpers, the commands, and a bench script run by a test', () => {
    expect(slurmEvidence('packages/slurm/test/slurm-client.e2e.test.ts')).not.toBeNull();
    expect(slurmEvidence('apps/scheduler/test/arrays.e2e.test.ts')).toMatch(/expectOneJobPerRun|slurmJobsFor|sbatch/);
    // chaos.e2e names sbatch itself, but its Slurm traffic is in bench/chaos.js and bench/lib.
    expect(benchSources(readFileSync(path.join(root, 'apps/scheduler/test/chaos.e2e.test.ts'), 'utf8'))).toEqual(
      expect.arrayContaining(['bench/chaos.js', 'bench/lib/chaos-cluster.js']),
    );
    expect(slurmEvidence('apps/scheduler/test/adaptive.e2e.test.ts')).toBeNull();
  });

  test('each entry says where and why, and each cluster has files of its own to run', () => {
    for (const [file, p] of Object.entries(E2E_PLAN)) {
      expect({ file, on: ['every', ...SERIES].includes(p.on), slot: SLOTS.includes(p.slot), why: p.why.length > 10 }).toEqual({ file, on: true, slot: true, why: true });
    }
    for (const series of SERIES) expect(planFiles(series, 'parallel').length).toBeGreaterThan(0);
  });

  test('the default run covers each file once per cluster it names; the matrix runs every file on every Slurm version, the multi-node files on their cluster', () => {
    const all = Object.keys(E2E_PLAN).sort();
    const runs = (matrix: boolean) => SERIES.flatMap((s) => SLOTS.flatMap((slot) => planFiles(s, slot, { matrix })));
    const planned = runs(false);
    for (const [file, p] of Object.entries(E2E_PLAN)) {
      expect({ file, times: planned.filter((f) => f === file).length }).toEqual({ file, times: p.on === 'every' ? SLURM_VERSIONS.length : 1 });
    }
    const multinode = all.filter((f) => E2E_PLAN[f]!.on === 'multinode');
    expect(multinode).toContain('apps/scheduler/test/multinode.e2e.test.ts');
    const singleNode = all.filter((f) => !multinode.includes(f));
    expect(runs(true).sort()).toEqual([...SLURM_VERSIONS.flatMap(() => singleNode), ...multinode].sort());
  });

  test('its command line prints the files of one cluster and slot, and refuses what it does not know', () => {
    const cli = (...args: string[]) => execFileSync(process.execPath, [path.join(root, 'scripts', 'e2e-plan.js'), ...args], { encoding: 'utf8' });
    expect(cli('files', '24.11', 'serial').trim().split('\n')).toEqual(planFiles('24.11', 'serial'));
    expect(cli('files', '22.05', 'quiet', '--matrix').trim().split('\n')).toEqual(planFiles('22.05', 'quiet', { matrix: true }));
    expect(cli('series').trim().split('\n')).toEqual(SERIES);
    expect(() => execFileSync(process.execPath, [path.join(root, 'scripts', 'e2e-plan.js'), 'files', '23.02', 'parallel'], { stdio: 'pipe' })).toThrow(/unknown cluster 23\.02/);
    expect(() => execFileSync(process.execPath, [path.join(root, 'scripts', 'e2e-plan.js'), 'files', '22.05', 'later'], { stdio: 'pipe' })).toThrow(/unknown slot later/);
  });
});

describe('the e2e sequencer (scripts/e2e-sequencer.js)', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Sequencer = require('../e2e-sequencer.js') as new (options: object) => { sort(tests: { path: string }[]): { path: string }[] };
  const sequencer = new Sequencer({});
  const at = (file: string) => ({ path: path.join(root, file) });

  test("starts a slot's files longest first, by the plan's minutes", () => {
    const files = planFiles('22.05', 'parallel');
    const sorted = sequencer.sort(files.map(at)).map((t) => path.relative(root, t.path));
    expect(new Set(sorted)).toEqual(new Set(files));
    const minutes = sorted.map((f) => E2E_PLAN[f]!.minutes);
    expect(minutes).toEqual([...minutes].sort((a, b) => b - a));
    const longest = files.reduce((a, b) => (E2E_PLAN[b]!.minutes > E2E_PLAN[a]!.minutes ? b : a));
    expect(sorted[0]).toBe(longest);
    expect(sorted[sorted.length - 1]).not.toBe(longest);
  });

  test("runs a one-at-a-time slot in the plan's order, chaos last", () => {
    const files = planFiles('24.11', 'serial');
    const sorted = sequencer.sort([...files].reverse().map(at)).map((t) => path.relative(root, t.path));
    expect(sorted).toEqual(Object.keys(E2E_PLAN).filter((f) => files.includes(f)));
    expect(sorted[sorted.length - 1]).toBe('apps/scheduler/test/chaos.e2e.test.ts');
  });

  test('every planned file has an estimate to be ordered by', () => {
    for (const [file, p] of Object.entries(E2E_PLAN)) expect({ file, minutes: p.minutes > 0 }).toEqual({ file, minutes: true });
  });
});
