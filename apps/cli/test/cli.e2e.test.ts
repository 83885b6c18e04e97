// The built `erg` (apps/cli/dist/main.js) as a child process against a real API, scheduler and
// the local Slurm cluster: what a user types, end to end. Every command's stdout is a pipe here,
// so these runs also check that non-terminal output carries no escape codes.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { closedPort, localClusterFile, repoRoot, waitFor } from '@erg/testkit';
import { Harness } from '../../scheduler/test/harness';
import { ANSI, parseCsv, requireBuiltCli, spawnCli, tempDir, type CliResult } from './helpers';

jest.setTimeout(120_000);

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

describe('erg against a real API and the local Slurm cluster', () => {
  const h = new Harness();
  const home = tempDir('erg-cli-e2e-');
  let campaignId = '';

  /**
   * Runs the built CLI with its own environment: the harness's API and token, a config file in a
   * temp dir, no FORCE_COLOR or other inherited settings, and a working directory outside the
   * repository (so the quickstart's .erg/token is not found). Killed at its deadline.
   */
  async function erg(args: string[], options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<CliResult> {
    const result = await spawnCli(args, { cwd: home, env: { HOME: home, ERG_CONFIG: path.join(home, 'config.json'), ERG_API_URL: h.url, ERG_TOKEN: h.token, ...options.env }, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) });
    expect(result.stdout).not.toMatch(ANSI);
    return result;
  }

  /** A spec file in the temp dir. */
  function specFile(name: string, text: string): string {
    const file = path.join(home, name);
    writeFileSync(file, text);
    return file;
  }

  beforeAll(async () => {
    requireBuiltCli();
    await h.start();
    await h.startInProcessScheduler();
  });
  afterAll(async () => {
    await h.stop();
  });

  test('clusters add --from the local cluster file, flags overriding; list; a second add is refused; --update replaces', async () => {
    // The local cluster's description (the one ERG_E2E_SLURM picks), pointed at this harness's own
    // work dir, under the name the specs below use.
    const local = JSON.parse(readFileSync(localClusterFile(), 'utf8'));
    const file = specFile('cluster.json', JSON.stringify({ ...local, name: 'local', workDir: h.workDir }));
    const add = await erg(['clusters', 'add', '--from', file, '--agent-api-url', h.url]);
    expect(add).toMatchObject({ code: 0 });
    expect(add.stdout).toBe(`Cluster local registered: ${local.user}@${local.host}:${local.port}, work dir ${h.workDir}\n`);

    const list = await erg(['clusters', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^local\\s+${local.user}@${local.host}:${local.port}\\s+${local.partition}\\s+${h.workDir}\\s`, 'm'));
    const json = JSON.parse((await erg(['clusters', 'list', '--json'])).stdout);
    expect(json.items).toEqual([expect.objectContaining({ name: 'local', agentApiUrl: h.url, workDir: h.workDir })]);

    const again = await erg(['clusters', 'add', '--from', file]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/a cluster named "local" already exists\nhint: .*--update/);
    const update = await erg(['clusters', 'add', '--from', file, '--agent-api-url', h.url, '--update']);
    expect(update.code).toBe(0);
    expect(update.stdout).toMatch(/^Cluster local saved/);
  });

  test('validate: the examples pass offline, a broken spec lists its field paths', async () => {
    const ok = await erg(['validate', path.join(repoRoot(), 'examples', 'quickstart.yaml')], { env: { ERG_API_URL: '', ERG_TOKEN: '' } });
    expect(ok).toMatchObject({ code: 0 });
    expect(ok.stdout).toContain('4 configurations × 5 repetitions = 20 runs on cluster local');
    const broken = await erg(['validate', specFile('broken.yaml', 'name: b\ncluster: local\nrepetitions: 0\nparameters: { a: [1, 1] }\nrun: echo {{b}}\n')]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/^ {2}repetitions: must be at least 1, got 0$/m);
    expect(broken.stderr).toMatch(/^ {2}parameters\.a\[1\]: value 1 duplicates parameters\.a\[0\]/m);
  });

  test('submit --watch runs a 2 × 2 campaign to completion and prints its results', async () => {
    const spec = specFile(
      'sweep.yaml',
      [
        'name: cli-sweep',
        'cluster: local',
        'repetitions: 2',
        'parameters:',
        '  steps: [1, 2]',
        'resources: { cpusPerTask: 1, time: "00:05:00" }',
        'telemetry: { intervalMs: 200 }',
        'run: |',
        '  echo "steps={{steps}}"',
        '  sleep 1',
        '  echo "done {{steps}}" >&2',
        'metrics:',
        "  - { name: steps, regex: 'steps=([0-9]+)' }",
        '',
      ].join('\n'),
    );
    const out = await erg(['submit', spec, '--watch', '--interval', '0.5'], { timeoutMs: 90_000 });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    campaignId = UUID.exec(out.stdout)![0];
    expect(out.stdout).toContain(`Campaign cli-sweep created: ${campaignId}`);
    expect(out.stdout).toContain('2 configurations × 2 repetitions = 4 runs on cluster local');
    // Elapsed as formatElapsed writes it: seconds, or minutes and seconds when the runs waited for
    // the shared node (a fresh clone saw 1 min 01 s); the watch's deadline bounds it (90 s).
    expect(out.stdout).toMatch(/^4\/4 runs done \(100\.0 %\) · completed 4 · elapsed (\d+ s|1 min \d\d s)$/m);
    expect(out.stdout).toMatch(/^Campaign cli-sweep completed after .*: completed 4\.$/m);
    expect(out.stdout).toMatch(/^marks\s+steps\s+n\s+time\s+± 95 %\s+energy.*\s+pareto$/m);
    // What the results claim, with its confidence and the Holm family, under the table.
    expect(out.stdout).toMatch(/^Claims \(95 %, Holm over \d+ comparisons?(, paired by block)?\):\n  Summary: .+\.\n  Fastest: steps=[12], /m);
    // Progress lines are printed when the counts change, so there are few and each is different.
    const progress = out.stdout.split('\n').filter((l) => / runs done /.test(l));
    expect(new Set(progress).size).toBe(progress.length);
  });

  test('results in all four formats parse back to the same numbers', async () => {
    const json = await erg(['results', campaignId, '--format', 'json']);
    expect(json.code).toBe(0);
    const results = JSON.parse(json.stdout);
    expect(results.campaignId).toBe(campaignId);
    expect(results.configurations.map((c: { key: string; n: number }) => [c.key, c.n])).toEqual([['steps=1', 2], ['steps=2', 2]]);

    const csv = parseCsv((await erg(['results', campaignId, '--format', 'csv', '--sort', 'energy'])).stdout);
    const [header, ...rows] = csv;
    expect(header).toEqual(['key', 'steps', 'n', 'time_s', 'time_ci95_low', 'time_ci95_high', 'energy_j', 'energy_ci95_low', 'energy_ci95_high', 'avg_power_w', 'edp_js', 'pareto', 'best_time', 'best_energy', 'best_edp']);
    expect(rows).toHaveLength(2);
    const energies = rows.map((r) => Number(r[header!.indexOf('energy_j')]));
    expect(energies[0]).toBeLessThanOrEqual(energies[1]!);
    for (const row of rows) {
      const c = results.configurations.find((x: { key: string }) => x.key === row[0]);
      expect(Number(row[header!.indexOf('time_s')])).toBe(c.timeS.mean);
      expect(Number(row[header!.indexOf('energy_j')])).toBe(c.energyJ.mean);
      expect(Number(row[header!.indexOf('edp_js')])).toBe(c.edpJs.mean);
      expect(row[header!.indexOf('pareto')]).toBe(String(c.paretoOptimal));
      expect(row[header!.indexOf('best_energy')]).toBe(String(results.best.energy === c.key));
    }

    const markdown = (await erg(['results', campaignId, '--format', 'markdown'])).stdout;
    expect(markdown).toMatch(/^\| marks \| steps \| n \| time \|/m);
    expect(markdown).toMatch(/^\| \*\*P[ TED]*\*\* \|/m);
    expect(markdown).toContain('Marks: P on the Pareto front');

    const table = (await erg(['results', campaignId])).stdout;
    expect(table).toMatch(/^P[ TED]*\s+[12]\s+2\s+\d/m);
  });

  test('runs, status and logs of the finished campaign', async () => {
    const runs = await erg(['runs', campaignId]);
    expect(runs.code).toBe(0);
    const lines = runs.stdout.trimEnd().split('\n').slice(1);
    expect(lines).toHaveLength(4);
    for (const line of lines) expect(line).toMatch(new RegExp(`^${UUID.source}\\s+steps=[12]\\s+[12]\\s+completed\\s+\\d+(_\\d+)?\\s+0$`));

    const status = await erg(['status', campaignId]);
    expect(status.stdout).toMatch(/^State\s+completed$/m);
    expect(status.stdout).toMatch(/^Runs\s+4: completed 4$/m);

    const { items } = JSON.parse((await erg(['runs', campaignId, '--json'])).stdout);
    const first = items[0];
    const stdout = await erg(['logs', first.id]);
    expect(stdout).toMatchObject({ code: 0, stdout: `steps=${first.parameters.steps}\n` });
    const stderr = await erg(['logs', first.id, '--stderr']);
    expect(stderr.stdout).toBe(`done ${first.parameters.steps}\n`);

    const one = await erg(['run', first.id]);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^State\s+completed$/m);
    expect(one.stdout).toMatch(/^Provenance$/m);
    expect(one.stdout).toMatch(/^Energy$/m);
    expect(JSON.parse((await erg(['run', first.id, '--json'])).stdout)).toMatchObject({ run: { id: first.id }, energy: { runId: first.id } });
  });

  test("export and verify: the finished campaign's evidence bundle checks offline — every run's figures and the results recomputed exactly", async () => {
    // Its runs shared the one local node: each run's stored figures keep the neighbours they were
    // computed with, so the bundle verifies whatever those jobs' records say now. A run whose
    // telemetry came after its figures is recomputed within a tick: the bundle is written once none is stale.
    const { items } = (await h.call<{ items: { id: string }[] }>('GET', `/v1/campaigns/${campaignId}/runs`)).body;
    expect(items).toHaveLength(4);
    await waitFor(async () => {
      for (const r of items) if ((await h.call<{ stale: boolean }>('GET', `/v1/runs/${r.id}/energy`)).body.stale !== false) return false;
      return true;
    });
    const exported = await erg(['export', campaignId, '--output', 'campaign.tar']);
    expect(exported).toMatchObject({ code: 0, stderr: '' });
    const verified = await erg(['verify', 'campaign.tar']);
    expect(verified).toMatchObject({ code: 0, stderr: '' });
    expect(verified.stdout).toContain('4 runs recomputed from their inputs and samples');
  });

  test('cancel a long-running campaign: it ends cancelled and its Slurm jobs go away', async () => {
    // Both at once on the one local node: the runs opt out of whole nodes.
    const spec = specFile('long.json', JSON.stringify({ name: 'cli-long', cluster: 'local', repetitions: 2, run: 'sleep 600', resources: { time: '00:20:00', exclusive: false } }));
    const submitted = await erg(['submit', '-q', spec]);
    expect(submitted.code).toBe(0);
    const id = submitted.stdout.trim();
    expect(id).toMatch(UUID);
    const running = await waitFor(
      async () => {
        const { items } = JSON.parse((await erg(['runs', id, '--json'])).stdout);
        return items.every((r: { state: string }) => r.state === 'running') ? items : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, what: 'both runs to be running' },
    );

    const cancel = await erg(['cancel', id]);
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toMatch(/^Campaign cli-long: (cancelling|cancelled) /);
    const watch = await erg(['watch', id, '--interval', '0.5'], { timeoutMs: 60_000 });
    expect(watch.code).toBe(1);
    expect(watch.stdout).toMatch(/^Campaign cli-long cancelled.*: cancelled 2\.$/m);

    // Slurm holds no live job of theirs any more (squeue keeps ended jobs listed for a while, as
    // CANCELLED); its accounting says each was cancelled.
    const runIds: string[] = running.map((r: { id: string }) => r.id);
    await waitFor(
      async () => {
        const live = await h.slurmLink().slurm.squeue();
        const alive = live.filter((j) => j.runId !== null && runIds.includes(j.runId) && j.runState !== 'cancelled');
        if (alive.length > 0) throw new Error(`still in squeue: ${alive.map((j) => `${j.jobId} ${j.state}`).join(', ')}`);
        const jobs = await h.slurmJobsFor(runIds);
        const states = runIds.map((runId) => jobs.get(runId)!.map((j) => `${j.jobId} ${j.state}`).join('+'));
        if (!runIds.every((runId) => jobs.get(runId)!.map((j) => j.runState).join() === 'cancelled')) throw new Error(`sacct: ${states.join(', ')}`);
        return true;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'the Slurm jobs of the cancelled campaign to end cancelled' },
    );
  });

  test('a bad token: exit 2 with a clear message; an unreachable API: exit 2', async () => {
    const bad = await erg(['status', campaignId], { env: { ERG_TOKEN: 'erg_not-a-real-token-00000000000000000000000' } });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/^erg: authentication failed \(401 ERG_UNAUTHORIZED\): the API at http:\/\/127\.0\.0\.1:\d+ refused the token\nhint: the token came from ERG_TOKEN/);

    const port = await closedPort();
    const closed = await erg(['clusters', 'list'], { env: { ERG_API_URL: `http://127.0.0.1:${port}` } });
    expect(closed.code).toBe(2);
    expect(closed.stderr).toContain(`cannot reach the API at http://127.0.0.1:${port} (ECONNREFUSED)`);
  });
});
