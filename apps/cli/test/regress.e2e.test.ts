// `erg suites` and `erg regress` as a CI job runs them, against a real API, scheduler and the
// local Slurm cluster: a suite applied from a file, its first run (no baseline: pass), a second
// unchanged run (pass), then a planted slowdown (regressed, exit 1), each with JUnit and Markdown
// reports read back. The local cluster has no power sensors: its energy is modelled from CPU use
// and varies with what else runs on the node, so this suite's policy is wide (50 %) and the
// planted slowdown large (2 s → 4 s); the statistics themselves are tested by simulation in
// packages/regress.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Harness } from '../../scheduler/test/harness';
import { ANSI, requireBuiltCli, spawnCli, tempDir, type CliResult } from './helpers';
import { expectValidJunit, suiteCounts, testcases } from './junit';

jest.setTimeout(300_000);

describe('erg regress against a real API and the local Slurm cluster', () => {
  const h = new Harness();
  const home = tempDir('erg-regress-e2e-');

  async function erg(args: string[], timeoutMs = 30_000): Promise<CliResult> {
    const result = await spawnCli(args, { cwd: home, env: { HOME: home, ERG_CONFIG: path.join(home, 'config.json'), ERG_API_URL: h.url, ERG_TOKEN: h.token }, timeoutMs });
    expect(result.stdout).not.toMatch(ANSI);
    return result;
  }

  function suiteFile(run: string): string {
    const file = path.join(home, 'suite.yaml');
    writeFileSync(
      file,
      [
        'name: ci-sleep',
        'description: a workload whose time we control',
        'regression: { threshold: 0.5, maxCv: 0.5 }',
        'campaign:',
        '  name: ci-sleep',
        '  cluster: local',
        '  repetitions: 3',
        '  parameters: { secs: [2] }',
        '  resources: { time: "00:02:00" }',
        '  telemetry: { intervalMs: 200 }',
        `  run: "${run}"`,
        '',
      ].join('\n'),
    );
    return file;
  }

  /** One CI job: apply the suite file, start a run, wait for its verdict, write both reports. */
  async function ciJob(run: string, n: number): Promise<{ result: CliResult; junit: string; markdown: string }> {
    const file = suiteFile(run);
    const validated = await erg(['validate', file]);
    expect(validated).toMatchObject({ code: 0 });
    expect(validated.stdout).toContain('valid suite ci-sleep: each run submits 3 runs on cluster local');
    expect((await erg(['suites', 'apply', file])).code).toBe(0);
    const junit = path.join(home, `junit-${n}.xml`);
    const markdown = path.join(home, `summary-${n}.md`);
    const result = await erg(['regress', '--suite', 'ci-sleep', '--trigger', '--wait', '--interval', '1', '--idempotency-key', `pipeline-${n}`, '--junit', junit, '--markdown', markdown], 200_000);
    return { result, junit: readFileSync(junit, 'utf8'), markdown: readFileSync(markdown, 'utf8') };
  }

  beforeAll(async () => {
    requireBuiltCli();
    await h.start();
    await h.registerCluster('local');
    await h.startInProcessScheduler();
  });
  afterAll(async () => {
    await h.stop();
  });

  test('first run: no baseline, passes (exit 0) and becomes the baseline', async () => {
    const { result, junit, markdown } = await ciJob('sleep {{secs}}', 1);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/without a baseline: PASS/);
    expect(result.stderr).toMatch(/Started run .* baseline none yet/);
    expect(result.stderr).toMatch(/\[\d+ s\] \w+ \d\/3 done/);
    await expectValidJunit(junit);
    expect(testcases(junit)).toEqual([expect.objectContaining({ classname: 'erg.ci-sleep', name: 'baseline', outcome: null })]);
    expect(markdown).toContain('no baseline yet');
  });

  test('unchanged: pass against the first run (exit 0), a time and an energy case per configuration', async () => {
    const { result, junit, markdown } = await ciJob('sleep {{secs}}', 2);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/against baseline [0-9a-f-]{36}: PASS/);
    await expectValidJunit(junit);
    expect(suiteCounts(junit)).toEqual({ tests: 2, failures: 0, errors: 0, skipped: 0 });
    expect(testcases(junit).map((c) => `${c.classname} ${c.name}`)).toEqual(['secs=2 time', 'secs=2 energy']);
    expect(markdown).toMatch(/^## ✅ PASS — suite `ci-sleep`/);
    // The campaign's own claims: one configuration has nothing to be compared with.
    expect(markdown).toMatch(/\nClaims of campaign [0-9a-f-]{36}: nothing to compare: fewer than 2 configurations have runs with both a time and an energy\.\n/);
  });

  test('a planted slowdown is a regression: exit 1, a JUnit failure naming the configuration, the Markdown says so', async () => {
    const { result, junit, markdown } = await ciJob('sleep {{secs}}; sleep {{secs}}', 3);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('REGRESSED');
    expect(result.stdout).toMatch(/secs=2\s+time\s+\+\d+\.\d %/);
    await expectValidJunit(junit);
    const time = testcases(junit).find((c) => c.name === 'time')!;
    expect(time).toMatchObject({ classname: 'secs=2', outcome: 'failure', type: 'regressed' });
    expect(time.message).toMatch(/time regressed: \+(9\d|1\d\d)\.\d %/);
    expect(markdown).toMatch(/^## ❌ REGRESSED — suite `ci-sleep`/);

    // The suite's history as the CLI shows it: three runs, newest first.
    const runs = await erg(['suites', 'runs', 'ci-sleep', '--json']);
    const items = JSON.parse(runs.stdout).items as { status: string; reasons: string[] }[];
    expect(items.map((r) => r.status)).toEqual(['regressed', 'pass', 'pass']);
    // The regressed run never becomes the baseline: reading the latest verdict again still says regressed.
    const again = await erg(['regress', '--suite', 'ci-sleep']);
    expect(again.code).toBe(1);
  });

  test('a retried CI job with the same idempotency key re-attaches to its run instead of starting another', async () => {
    const first = await erg(['suites', 'trigger', 'ci-sleep', '--idempotency-key', 'pipeline-3', '--json']);
    expect(first.code).toBe(0);
    const items = JSON.parse((await erg(['suites', 'runs', 'ci-sleep', '--json'])).stdout).items as { id: string }[];
    expect(items).toHaveLength(3);
    expect(JSON.parse(first.stdout).id).toBe(items[0]!.id);
  });
});
