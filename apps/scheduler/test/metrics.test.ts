import { ClusterUnreachableError, HostKeyMismatchError, SlurmCommandError } from '@erg/slurm';
import { parsePrometheusText, sampleValue } from '@erg/testkit';
import { SchedulerConfig } from '../src/config';
import { countCycleError, createSchedulerMetrics } from '../src/metrics';
import { sshErrorKind } from '../src/ssh-errors';

describe('scheduler metrics', () => {
  test('the metrics server listens on 127.0.0.1:9465 unless configured; 0 turns it off', () => {
    expect(SchedulerConfig.parse({})).toMatchObject({ ERG_METRICS_PORT: 9465, ERG_METRICS_HOST: '127.0.0.1' });
    expect(SchedulerConfig.parse({ ERG_METRICS_PORT: '0' }).ERG_METRICS_PORT).toBe(0);
    expect(SchedulerConfig.safeParse({ ERG_METRICS_PORT: '70000' }).success).toBe(false);
  });

  test('a failed cycle counts under the Slurm command or the SSH failure kind', async () => {
    const m = createSchedulerMetrics();
    countCycleError(m, 'a', new SlurmCommandError('sbatch loop', 1, 'no'));
    countCycleError(m, 'a', new SlurmCommandError('sacct', 1, 'no'));
    countCycleError(m, 'a', new ClusterUnreachableError('a:22', 'ECONNREFUSED'));
    countCycleError(m, 'b', new HostKeyMismatchError('b:22', 'SHA256:x', 'SHA256:y'));
    countCycleError(m, 'b', new Error('a bug, not the cluster'));
    const samples = parsePrometheusText(await m.registry.metrics());
    expect(sampleValue(samples, 'erg_slurm_errors_total', { cluster: 'a', command: 'sbatch' })).toBe(1);
    expect(sampleValue(samples, 'erg_slurm_errors_total', { cluster: 'a', command: 'sacct' })).toBe(1);
    expect(sampleValue(samples, 'erg_ssh_errors_total', { cluster: 'a', kind: 'unreachable' })).toBe(1);
    expect(sampleValue(samples, 'erg_ssh_errors_total', { cluster: 'b', kind: 'host_key_mismatch' })).toBe(1);
    expect(samples.filter((s) => s.name.startsWith('erg_s') && s.labels.cluster === 'b')).toHaveLength(1);
  });

  test('only SSH errors have a kind', () => {
    expect(sshErrorKind({ code: 'ERG_SSH_AUTH' })).toBe('auth');
    expect(sshErrorKind({ code: 'ERG_SLURM_PARSE' })).toBeNull();
    expect(sshErrorKind(null)).toBeNull();
  });

  test('two schedulers in one process keep separate registries', () => {
    const a = createSchedulerMetrics();
    const b = createSchedulerMetrics();
    a.submissions.inc({ cluster: 'x', outcome: 'queued' });
    expect(b.registry.getSingleMetric('erg_submissions_total')).not.toBe(a.registry.getSingleMetric('erg_submissions_total'));
  });
});
