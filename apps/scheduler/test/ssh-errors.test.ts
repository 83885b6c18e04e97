import { CertificateExpiredError, ConnectionLostError, JobFileRefusedError, SlurmCommandError, SshAuthError, SshTimeoutError } from '@erg/slurm';
import { SecretError } from '@erg/secrets';
import { isClusterError, isNothingRanError, sshErrorKind } from '../src/ssh-errors';

describe('isClusterError', () => {
  test("every error erg throws on purpose is the cluster's failure, retryable or not", () => {
    expect(isClusterError(new SshTimeoutError('a:22', 10, 'squeue'))).toBe(true);
    expect(isClusterError(new SlurmCommandError('squeue', 1, 'Unable to contact slurm controller'))).toBe(true);
    // Not retryable, still recorded on the cluster and tried again next cycle: the fix happens outside erg.
    const auth = new SshAuthError('a:22', 'erg');
    expect(auth.retryable).toBe(false);
    expect(isClusterError(auth)).toBe(true);
    expect(isClusterError(new SecretError('ERG_SECRET_UNKNOWN_KEY', 'sealed with key 0badc0de, which this process does not have'))).toBe(true);
    expect(isClusterError(new JobFileRefusedError('stdout.log', 'not-regular', 'stdout.log is a FIFO'))).toBe(true);
  });

  test('anything else is a bug, or the database: the cycle throws it', () => {
    expect(isClusterError(new Error('a bug'))).toBe(false);
    expect(isClusterError(Object.assign(new Error('unique constraint'), { code: 'P2002' }))).toBe(false);
    expect(isClusterError(Object.assign(new Error('looks like one'), { code: 'ERG_SSH_AUTH' }))).toBe(false);
    expect(isClusterError(null)).toBe(false);
  });
});

describe('an expired certificate', () => {
  const expired = new CertificateExpiredError('erg@login:22', new Date('2026-12-01T20:00:00Z'), 'erg clusters credentials gh --cert FILE');

  test('is a failure before anything ran: the runs of a batch go back to pending, never to failed', () => {
    expect(isNothingRanError(expired)).toBe(true);
    expect(isNothingRanError(new ConnectionLostError('login:22', 'gone'))).toBe(false);
    expect(isClusterError(expired)).toBe(true);
    expect(expired.retryable).toBe(false);
  });

  test('has a kind of its own on the SSH error counter, and a message that says how to rotate it', () => {
    expect(sshErrorKind(expired)).toBe('certificate_expired');
    expect(expired.message).toBe(
      'certificate expired (the certificate for erg@login:22 was valid until 2026-12-01T20:00:00.000Z); rotate it: erg clusters credentials gh --cert FILE',
    );
  });
});
