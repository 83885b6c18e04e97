// Telemetry end to end on the local Slurm cluster: the agent runs beside every job, its samples
// reach Postgres, and the run's energy is computed, with its validity gates (healthy runs pass
// them, and the agent's pushes measure its clock). The local node has no power sensors, so the
// agent measures with the model source (method: model) — that is what this cluster can show.
import { hostname } from 'node:os';
import { telemetrySummary } from '@erg/db';
import { RUN_DIR_FILES, TELEMETRY_DIR_FILES } from '@erg/spec';
import { waitFor } from '@erg/testkit';
import { localClusterHarness, Relay } from './harness';

jest.setTimeout(300_000);

describe('telemetry agents on the local Slurm cluster', () => {
  const h = localClusterHarness();

  async function samplesOf(runId: string): Promise<number> {
    return (await telemetrySummary(h.db, runId)).reduce((n, s) => n + s.samples, 0);
  }

  /** Every sample the agents spooled for a run, read from the cluster. */
  async function spooledSamples(runDir: string): Promise<number> {
    const { connection } = h.slurmLink();
    const listing = await connection.exec(`cat '${runDir}'/telemetry/*.spool`);
    return listing.stdout
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { samples: { t: number | number[] }[] })
      .reduce((n, b) => n + b.samples.reduce((m, s) => m + (Array.isArray(s.t) ? s.t.length : 1), 0), 0);
  }

  test('every run comes back with its telemetry and energy figures', async () => {
    const campaign = await h.submit({
      name: 'measured', cluster: 'local', repetitions: 2, parameters: { n: [2000000, 4000000] },
      telemetry: { intervalMs: 100, idleBaselineS: 1 },
      run: 'awk -v n={{n}} \'BEGIN { s = 0; for (i = 0; i < n; i++) s += sqrt(i); print "steps=" n }\'\nsleep 1',
      metrics: [{ name: 'steps', regex: 'steps=([0-9]+)', work: true }],
    });
    const runs = await h.waitForCampaignEnd(campaign.id);
    for (const run of runs) {
      expect(run.state).toBe('completed');
      const { status, body: e } = await h.call('GET', `/v1/runs/${run.id}/energy`);
      expect(status).toBe(200);
      expect(e.method).toBe('model');
      expect(e.timeS).toBeCloseTo(run.timeS, 6);
      expect(e.energyJ).toBeGreaterThan(0);
      expect(e.avgPowerW).toBeGreaterThanOrEqual(60 * 0.99); // the model's idle floor (cluster default)
      expect(e.coverage).toBeGreaterThan(0.8);
      expect(e.nodes.map((n: { node: string }) => n.node)).toEqual([hostname()]);
      expect(e.energyPerUnit.steps).toBeCloseTo(e.energyJ / Number(run.parameters.n), 9);
      expect(e.idle.powerW).toBeGreaterThan(0);
      // A healthy run passes every gate; its agent's pushes measured its clock against the API's.
      expect(e.validity).toMatchObject({ valid: true, reasons: [], excluded: false });
      expect(e.validity.checks.find((c: { check: string }) => c.check === 'clock_offset')).toMatchObject({ status: 'pass', where: expect.stringMatching(/^\S+ \(\d+ push(es)?\)$/) });
      expect(e.flags).not.toContain('invalid');
      // What the agent spooled is exactly what was stored: nothing lost, nothing twice.
      expect(await samplesOf(run.id)).toBe(await spooledSamples(run.runDir));
      const series = await h.call('GET', `/v1/runs/${run.id}/telemetry?sensor=cpu0.power`);
      expect(series.body.series[0].source).toBe('model');
    }
    // Nothing of a run is the cluster's other users' to read (the run umask, 077 by default): what
    // erg staged, what Slurm wrote for the job (followed from the run's links), what the job and its agents wrote.
    const { runDir } = runs[0];
    const { stdout } = await h.slurmLink().connection.exec(
      `cd '${runDir}' && stat -L -c '%a %n' . ${RUN_DIR_FILES.jobScript} ${RUN_DIR_FILES.runScript} ${RUN_DIR_FILES.runToken} ${RUN_DIR_FILES.stdout} ` +
        `${RUN_DIR_FILES.slurmOut} ${RUN_DIR_FILES.timing} ${RUN_DIR_FILES.telemetryDir} ${RUN_DIR_FILES.telemetryDir}/${TELEMETRY_DIR_FILES.agentLog} ${RUN_DIR_FILES.telemetryDir}/*.spool`,
    );
    const modes = stdout.trim().split('\n').map((line) => line.split(' ') as [string, string]);
    expect(modes.length).toBeGreaterThanOrEqual(10);
    expect(modes.filter(([mode]) => (parseInt(mode, 8) & 0o077) !== 0)).toEqual([]);
    const results = await h.call('GET', `/v1/campaigns/${campaign.id}/results`);
    expect(results.body.configurations.map((c: { n: number }) => c.n)).toEqual([2, 2]);
    expect(results.body.paretoFront.length).toBeGreaterThanOrEqual(1);
    expect(results.body.best.time).toBeTruthy();
    expect(results.body.validity).toMatchObject({ publishable: true, runs: 4, valid: 4, invalid: 0 });
  });

  test('with the API cut off for part of the run, live pushes plus the spool pulled at the end lose no sample; a resent batch changes nothing', async () => {
    const relay = new Relay({ host: '127.0.0.1', port: Number(new URL(h.url).port) });
    await relay.open();
    await h.registerCluster('flaky-api', { agentApiUrl: `http://127.0.0.1:${relay.port}` });
    const campaign = await h.submit({ name: 'offline', cluster: 'flaky-api', telemetry: { intervalMs: 100 }, run: 'sleep 6' });
    const runId = campaign.runs[0]!.id;
    // Some batches arrive live; then the API becomes unreachable for the rest of the run.
    await waitFor(async () => (await samplesOf(runId)) > 0, { timeoutMs: 60_000, what: 'a first live batch' });
    await relay.cut();
    const [run] = await h.waitForCampaignEnd(campaign.id);
    expect(run.state).toBe('completed');
    const spooled = await spooledSamples(run.runDir);
    expect(spooled).toBeGreaterThan(20);
    expect(await samplesOf(run.id)).toBe(spooled);
    const before = (await h.call('GET', `/v1/runs/${run.id}/energy`)).body;
    expect(before.energyJ).toBeGreaterThan(0);

    // An agent (or anyone) sending a stored batch again: accepted as a duplicate, figures unchanged.
    const { connection } = h.slurmLink();
    const first = (await connection.exec(`head -n 1 '${run.runDir}'/telemetry/*.spool`)).stdout;
    const again = await h.call('POST', `/v1/runs/${run.id}/telemetry`, JSON.parse(first));
    expect(again.body).toEqual({ accepted: 0, duplicate: true });
    const after = (await h.call('GET', `/v1/runs/${run.id}/energy`)).body;
    expect(after.energyJ).toBe(before.energyJ);
    await waitFor(async () => (await samplesOf(run.id)) === spooled, { timeoutMs: 5000, what: 'sample count unchanged' });
  });
});
