import {
  ChannelError, ChannelOpenError, ClusterUnreachableError, ConnectionClosedError, ConnectionLostError, HostKeyMismatchError, JobFileReadError,
  JobFileRefusedError, OutputTooLargeError, SftpError, SlurmCommandError, SlurmParseError, SshAuthError, SshTimeoutError,
} from '@erg/slurm';
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
    expect(sshErrorKind(new SshAuthError('a:22', 'erg'))).toBe('auth');
    expect(sshErrorKind(new SlurmParseError('squeue', 'x', 'no separator'))).toBeNull();
    expect(sshErrorKind(new JobFileRefusedError('stdout.log', 'not-regular', 'stdout.log is a FIFO'))).toBeNull();
    // By class, not by the look of a code: an object that merely carries one is no SSH error.
    expect(sshErrorKind({ code: 'ERG_SSH_AUTH' })).toBeNull();
    expect(sshErrorKind(null)).toBeNull();
  });

  test("every SSH error's kind is its code's tail, in lower case (the label values of erg_ssh_errors_total)", () => {
    const all = [
      new HostKeyMismatchError('a:22', 'SHA256:x', 'SHA256:y'),
      new ClusterUnreachableError('a:22', 'ECONNREFUSED'),
      new SshAuthError('a:22', 'erg'),
      new ConnectionLostError('a:22', 'reset'),
      new ChannelOpenError('a:22', 'limit'),
      new ChannelError('a:22', 'broken'),
      new SshTimeoutError('a:22', 10, 'sleep 1'),
      new OutputTooLargeError('a:22', 10, 'cat big'),
      new SftpError('a:22', 'write', '/x'),
      new ConnectionClosedError('a:22'),
      new JobFileReadError('a:22', '/x/stdout.log', 'no stat'),
    ];
    expect(new Set(all.map((e) => e.code)).size).toBe(11);
    for (const err of all) expect(sshErrorKind(err)).toBe(err.code.slice('ERG_SSH_'.length).toLowerCase());
  });

  test('two schedulers in one process keep separate registries', () => {
    const a = createSchedulerMetrics();
    const b = createSchedulerMetrics();
    a.submissions.inc({ cluster: 'x', outcome: 'queued' });
    expect(b.registry.getSingleMetric('erg_submissions_total')).not.toBe(a.registry.getSingleMetric('erg_submissions_total'));
  });
});
