import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { erg, routes, tempDir, type RecordedRequest } from './helpers';

const KEY = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n';

function keyFile(): string {
  const file = path.join(tempDir(), 'id_ed25519');
  writeFileSync(file, KEY);
  return file;
}

const view = {
  id: 'c', name: 'gh', host: 'login', port: 22, user: 'alice', hostKeySha256: null, hostKeyPolicy: 'trust-on-first-use', defaultPartition: null,
  workDir: '/w', agentCommand: 'node', agentApiUrl: null, modelIdleW: 60, modelMaxW: 250, maxConcurrentRuns: null, lastError: null, lastContactAt: null,
  createdAt: '2026-11-30T12:00:00.000Z',
};

describe('erg clusters add (scripted API)', () => {
  test('--trust-on-first-use sends no fingerprint and the policy; --project goes in the query', async () => {
    const seen: RecordedRequest[] = [];
    const out = await erg(['clusters', 'add', '--name', 'gh', '--host', 'login', '--user', 'alice', '--key-file', keyFile(), '--work-dir', '/w', '--trust-on-first-use', '--project', 'gemm'], {
      api: routes({ 'POST /v1/clusters': (req) => (seen.push(req), { status: 201, body: view }) }),
    });
    expect(out.code).toBe(0);
    const body = JSON.parse(seen[0]!.body);
    expect(body).toMatchObject({ name: 'gh', hostKeyPolicy: 'trust-on-first-use', privateKey: KEY });
    expect(body).not.toHaveProperty('hostKeySha256');
    expect(seen[0]!.query.get('project')).toBe('gemm');
  });

  test('--max-queued-jobs and --max-concurrent-runs reach the body (none: no cap); a bad value is a usage error naming the flag', async () => {
    const seen: RecordedRequest[] = [];
    const base = ['clusters', 'add', '--name', 'gh', '--host', 'login', '--user', 'alice', '--key-file', keyFile(), '--work-dir', '/w', '--trust-on-first-use'];
    const out = await erg([...base, '--max-queued-jobs', '10', '--max-concurrent-runs', 'none'], {
      api: routes({ 'POST /v1/clusters': (req) => (seen.push(req), { status: 201, body: { ...view, maxQueuedJobs: 10 } }) }),
    });
    expect(out.code).toBe(0);
    expect(JSON.parse(seen[0]!.body)).toMatchObject({ maxQueuedJobs: 10, maxConcurrentRuns: null });
    for (const bad of ['0', '2.5', 'ten']) {
      const refused = await erg([...base, '--max-queued-jobs', bad]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/--max-queued-jobs.*whole number from 1 to 1000000, or none/);
    }
  });

  test('without a fingerprint or --trust-on-first-use it is a usage error naming --host-key', async () => {
    const out = await erg(['clusters', 'add', '--name', 'gh', '--host', 'login', '--user', 'alice', '--key-file', keyFile(), '--work-dir', '/w']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('--host-key');
  });
});
