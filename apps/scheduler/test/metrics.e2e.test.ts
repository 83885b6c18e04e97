// The scheduler's Prometheus metrics after a real campaign on the local Slurm cluster, read from
// its registry and through its HTTP server.
import { parsePrometheusText, sampleValue, waitFor } from '@erg/testkit';
import { startMetricsServer, type MetricsServer } from '../src/metrics';
import { Harness } from './harness';

jest.setTimeout(300_000);

describe('scheduler metrics on the local Slurm cluster', () => {
  const h = new Harness();
  let server: MetricsServer | null = null;

  beforeAll(async () => {
    await h.start();
    await h.registerCluster('local');
    await h.startInProcessScheduler();
  });
  afterAll(async () => {
    await server?.close();
    await h.stop();
  });

  test('submissions, finished runs and cycles of a 3-run campaign are counted and served at /metrics', async () => {
    const campaign = await h.submit({
      name: 'metrics', cluster: 'local', parameters: { n: [1, 2, 3] },
      resources: { cpusPerTask: 1, time: '00:05:00' },
      run: 'echo n={{n}}',
    });
    const runs = await h.waitForCampaignEnd(campaign.id);
    expect(runs.map((r) => r.state)).toEqual(['completed', 'completed', 'completed']);

    const metrics = h.schedulerMetrics!;
    const read = async () => parsePrometheusText(await metrics.registry.metrics());
    // The counter moves right after the run's row does: wait for it, with a deadline.
    await waitFor(async () => (sampleValue(await read(), 'erg_runs_finished_total', { cluster: 'local', state: 'completed' }) ?? 0) >= 3, {
      timeoutMs: 10_000, intervalMs: 100, what: 'erg_runs_finished_total to count 3 completed runs',
    });
    const samples = await read();
    expect(sampleValue(samples, 'erg_submissions_total', { cluster: 'local', outcome: 'queued' })).toBeGreaterThanOrEqual(3);
    expect(sampleValue(samples, 'erg_cycle_duration_seconds_count', { cluster: 'local' })).toBeGreaterThanOrEqual(1);
    expect(samples.filter((s) => s.name === 'erg_slurm_errors_total' || s.name === 'erg_ssh_errors_total')).toEqual([]);
    // No run or campaign id ever becomes a label.
    const ids = [campaign.id, ...runs.map((r) => r.id)];
    expect(samples.filter((s) => Object.values(s.labels).some((v) => ids.includes(v)))).toEqual([]);

    server = await startMetricsServer(metrics.registry, '127.0.0.1', 0);
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toMatch(/^erg_submissions_total\{cluster="local",outcome="queued"\} \d+$/m);
    expect(text).toMatch(/^erg_runs_finished_total\{cluster="local",state="completed"\} \d+$/m);
    expect(text).toMatch(/^erg_scheduler_process_cpu_user_seconds_total /m);
    expect((await fetch(`http://127.0.0.1:${server.port}/nope`)).status).toBe(404);
  });
});
