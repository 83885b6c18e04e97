import { auditTarget, derive, ROUTES } from '../src/audit';
import { formatBytes } from '../src/body-limits';
import { bucketOf } from '../src/rate-limit';

describe('audit actions from route patterns', () => {
  test('the table and the derivation agree for every route erg has', () => {
    for (const [key, target] of Object.entries(ROUTES)) {
      const [method, pattern] = key.split(' ') as [string, string];
      expect(derive(method, pattern)).toEqual(target);
    }
  });

  test('routes added later get an action of their own', () => {
    expect(derive('POST', '/v1/tokens/:id/revoke')).toEqual({ action: 'token.revoke', resourceType: 'token', param: 'id' });
    expect(derive('DELETE', '/v1/tokens/:id')).toEqual({ action: 'token.delete', resourceType: 'token', param: 'id' });
    expect(derive('POST', '/v1/projects')).toEqual({ action: 'project.create', resourceType: 'project' });
    expect(derive('PATCH', '/v1/projects/:name')).toEqual({ action: 'project.update', resourceType: 'project', param: 'name' });
    expect(derive('POST', '/v1/projects/:name/members')).toEqual({ action: 'member.create', resourceType: 'member' });
    expect(derive('POST', '/v1/policies')).toEqual({ action: 'policy.create', resourceType: 'policy' });
  });

  test('reads, telemetry ingest and paths outside /v1 are not audited; unknown /v1 routes are', () => {
    expect(auditTarget('GET', '/v1/campaigns', '/v1/campaigns')).toBeNull();
    expect(auditTarget('POST', '/v1/runs/:id/telemetry', '/v1/runs/x/telemetry')).toBeNull();
    expect(auditTarget('POST', undefined, '/metrics')).toBeNull();
    expect(auditTarget('POST', undefined, '/v1/nope')).toEqual({ action: 'route.unknown', resourceType: 'route' });
    expect(auditTarget('POST', '/v1/campaigns/:id/cancel', '/v1/campaigns/x/cancel')).toEqual(ROUTES['POST /v1/campaigns/:id/cancel']);
  });
});

describe('rate-limit buckets', () => {
  test('mutations under /v1 count; telemetry ingest has its own bucket; expensive reads theirs; other reads and the rest are free', () => {
    expect(bucketOf('POST', '/v1/campaigns', '/v1/campaigns')).toBe('mutations');
    expect(bucketOf('DELETE', '/v1/suites/:name', '/v1/suites/a')).toBe('mutations');
    expect(bucketOf('PATCH', undefined, '/v1/anything')).toBe('mutations');
    expect(bucketOf('POST', '/v1/runs/:id/telemetry', '/v1/runs/x/telemetry')).toBe('telemetry');
    expect(bucketOf('GET', '/v1/runs/:id/telemetry', '/v1/runs/x/telemetry')).toBe('reads');
    expect(bucketOf('GET', '/v1/campaigns/:id/results', '/v1/campaigns/x/results')).toBe('reads');
    expect(bucketOf('HEAD', '/v1/campaigns/:id/results', '/v1/campaigns/x/results')).toBe('reads');
    expect(bucketOf('GET', '/v1/campaigns/:id/export', '/v1/campaigns/x/export')).toBe('reads');
    expect(bucketOf('GET', '/v1/runs/:id/logs', '/v1/runs/x/logs')).toBe('reads');
    expect(bucketOf('GET', '/v1/campaigns/:id', '/v1/campaigns/x')).toBeNull();
    expect(bucketOf('GET', '/v1/campaigns', '/v1/campaigns')).toBeNull();
    expect(bucketOf('GET', undefined, '/v1/nope')).toBeNull();
    expect(bucketOf('POST', undefined, '/metrics')).toBeNull();
  });
});

test('formatBytes names limits the way the docs do', () => {
  expect(formatBytes(1024 * 1024)).toBe('1 MiB');
  expect(formatBytes(64 * 1024)).toBe('64 KiB');
  expect(formatBytes(1000)).toBe('1000 bytes');
});
