// Jump hosts and OpenSSH certificates end to end: the API, a scheduler, and the local Slurm
// cluster reached through a bastion of the test's own that only forwards, on a login node of the
// test's own that takes only certificates of a test CA (@erg/testkit test-sshd; the shared sshd
// on :2222 is not touched). An expired certificate leaves runs pending with the reason, a rotation
// through PUT /v1/clusters/{name}/credentials lets them run and does not drop a command in
// flight, and a bastion whose host key changed is refused, naming the hop.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findClusterByName } from '@erg/db';
import { makeTestCa, makeTestKey, startTestSshd, waitFor, type TestCa, type TestKey, type TestSshd } from '@erg/testkit';
import { ClusterLinks } from '../src/connections';
import { Harness } from './harness';

jest.setTimeout(300_000);

describe('a cluster behind a bastion, logging in with short-lived certificates', () => {
  const h = new Harness();
  let keys: string;
  let ca: TestCa;
  let ergKey: TestKey;
  let bastionKey: TestKey;
  let login: TestSshd;
  let bastion: TestSshd;

  const jump = (over: { hostKeySha256?: string } = {}) => ({
    host: bastion.host, port: bastion.port, user: 'root', privateKey: bastionKey.privateKey, hostKeySha256: over.hostKeySha256 ?? bastion.hostKeySha256,
  });
  const register = async (name: string, certificate: string, jumpHosts = [jump()]) => {
    const res = await h.call('PUT', `/v1/clusters/${name}`, {
      host: login.host, port: login.port, user: 'root', privateKey: ergKey.privateKey, certificate, jumpHosts, hostKeySha256: login.hostKeySha256,
      defaultPartition: h.local.partition, workDir: h.workDir, agentApiUrl: h.url,
    });
    if (res.status !== 200) throw new Error(`registering ${name} failed: ${JSON.stringify(res.body)}`);
    return res.body;
  };
  /** Waits until the run is pending with a reason matching `why`, and returns that reason. */
  const pendingReason = (runId: string, why: RegExp) =>
    waitFor(
      async () => {
        const { body } = await h.call('GET', `/v1/runs/${runId}`);
        if (body.state !== 'pending' && body.state !== 'submitting') throw new Error(`the run is ${body.state}: ${body.reason}`);
        return body.state === 'pending' && why.test(body.reason ?? '') ? (body.reason as string) : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: `run ${runId} to wait with ${why}` },
    );

  beforeAll(async () => {
    keys = mkdtempSync(path.join(os.tmpdir(), 'erg-credentials-e2e-'));
    ca = makeTestCa(keys);
    ergKey = makeTestKey(keys, 'erg');
    bastionKey = makeTestKey(keys, 'bastion-user');
    login = await startTestSshd({ role: 'login', trustedUserCaKeys: [ca.key.publicKey] });
    bastion = await startTestSshd({ role: 'jump', authorizedKeys: [bastionKey.publicKey], permitOpen: [`127.0.0.1:${login.port}`] });
    // The API first: the cluster is registered, and its certificate expires, before any scheduler runs.
    await h.start();
  });
  afterAll(async () => {
    await h.stop();
    await Promise.all([login, bastion].map((s) => s?.stop()));
    if (keys) rmSync(keys, { recursive: true, force: true });
  });

  test('an expired certificate: runs wait with the reason, nothing fails; a rotated one lets them run', async () => {
    const shortLived = ca.sign(ergKey, { validity: '-1m:+5s', serial: 1, keyId: 'erg short' });
    await register('gh', shortLived);
    await waitFor(async () => (await h.call('GET', '/v1/clusters/gh')).body.certificate.status === 'expired', {
      timeoutMs: 30_000, intervalMs: 500, what: 'the certificate to expire',
    });
    const view = (await h.call('GET', '/v1/clusters/gh')).body;
    expect(view.warnings).toEqual([expect.stringMatching(/^the cluster's certificate expired .* ago .*: erg does not connect and runs wait; rotate it: erg clusters credentials gh --cert FILE$/)]);

    const campaign = await h.submit({ name: 'behind-bastion', cluster: 'gh', run: 'echo "on $(hostname) as $(id -un)"' });
    await h.startInProcessScheduler();
    const reason = await pendingReason(campaign.runs[0]!.id, /certificate expired/);
    expect(reason).toMatch(
      new RegExp(`^waiting for cluster "gh": certificate expired \\(the certificate for root@${login.host}:${login.port} was valid until \\S+Z\\); rotate it: erg clusters credentials gh --cert FILE$`),
    );
    // Nothing was sent to the login node: the certificate was never offered.
    expect((await h.call('GET', '/v1/clusters/gh')).body.lastContactAt).toBeNull();
    const metrics = await h.schedulerMetrics!.registry.getSingleMetricAsString('erg_ssh_errors_total');
    expect(metrics).toMatch(/erg_ssh_errors_total\{cluster="gh",kind="certificate_expired"\} [1-9]/);

    const rotated = await h.call('PUT', '/v1/clusters/gh/credentials', { certificate: ca.sign(ergKey, { validity: '-1m:+1h', serial: 2 }) });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ credentialsVersion: 2, certificate: { serial: '2', status: 'valid' }, lastError: null });
    const [run] = await h.waitForCampaignEnd(campaign.id, 120_000);
    expect(run.state).toBe('completed');
    expect(run.submitAttempts).toBeGreaterThanOrEqual(1);
  });

  test('rotating the key and certificate does not drop a command in flight on the pooled connection', async () => {
    // The scheduler's own pool, over the rows the API wrote: what each cycle does.
    const links = new ClusterLinks(4, h.secrets);
    try {
      const before = links.get((await findClusterByName(h.db, 'gh'))!);
      const inFlight = before.connection.exec('sleep 3; echo survived', { timeoutMs: 60_000 });
      await waitFor(() => before.connection.channelStats.open === 1, { what: 'the long command to start' });

      const oldKey = ergKey;
      ergKey = makeTestKey(keys, 'erg-rotated');
      const res = await h.call('PUT', '/v1/clusters/gh/credentials', { privateKey: ergKey.privateKey, certificate: ca.sign(ergKey, { serial: 3 }) });
      expect(res.status).toBe(200);
      // From now on the login node refuses the old key for new logins.
      login.revoke([oldKey.publicKey]);

      const after = links.get((await findClusterByName(h.db, 'gh'))!);
      expect(after.connection).toBe(before.connection);
      expect((await after.slurm.squeue()).length).toBeGreaterThanOrEqual(0);
      expect((await after.connection.exec('id -un')).stdout).toBe('root\n');
      expect((await inFlight).stdout).toBe('survived\n');
    } finally {
      await links.closeAll();
    }
  });

  test('a bastion whose host key changed: runs wait with a HostKeyMismatchError naming the jump host; fixing the pin lets them run', async () => {
    const pinned = bastion.hostKeySha256;
    await bastion.restart({ newHostKey: true });
    await register('gh-moved', ca.sign(ergKey, { serial: 4 }), [jump({ hostKeySha256: pinned })]);
    const campaign = await h.submit({ name: 'moved-bastion', cluster: 'gh-moved', run: 'echo hello' });
    const reason = await pendingReason(campaign.runs[0]!.id, /host key/);
    expect(reason).toContain(`host key of jump host ${bastion.host}:${bastion.port} does not match: expected ${pinned}, got ${bastion.hostKeySha256}`);
    expect(reason).toContain("update the cluster's jumpHosts[0].hostKeySha256");

    const fixed = await h.call('PUT', '/v1/clusters/gh-moved/credentials', { jumpHosts: [jump()] });
    expect(fixed.status).toBe(200);
    const [run] = await h.waitForCampaignEnd(campaign.id, 120_000);
    expect(run.state).toBe('completed');
  });
});
