// `erg clusters node-report NAME FILE` and the stored report in `erg clusters show`, against a
// scripted API. The report is the agent test's output against the fake NVML (R535 profile) and the
// GH200 hwmon fixture (packages/spec/test/fixtures/node-doctor-report.json): a fixture.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { erg, routes, tempDir, type RecordedRequest } from './helpers';

const FIXTURE = path.join(__dirname, '../../../packages/spec/test/fixtures/node-doctor-report.json');
const REPORT = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { node: string; time: string };
const STORED = { node: REPORT.node, takenAt: REPORT.time, storedAt: '2026-12-04T18:00:00.000Z', report: REPORT };
const view = (nodeReport: unknown) => ({
  id: 'c', name: 'gh', host: 'login', port: 22, user: 'alice', hostKeySha256: 'SHA256:' + 'B'.repeat(43), hostKeyPolicy: 'pinned', defaultPartition: null, workDir: '/w',
  agentCommand: 'node', agentApiUrl: null, modelIdleW: 60, modelMaxW: 250, maxConcurrentRuns: null, powerHelper: '/usr/local/sbin/erg-power-helper',
  capabilities: null, lastError: null, lastContactAt: null, createdAt: '2026-11-30T12:00:00.000Z', certificate: null, jumpHosts: [], credentialsVersion: 1,
  credentialsUpdatedAt: null, warnings: [], nodeReport,
});

test('erg clusters show: the stored report\'s node, time, verdict, each floor and each check', async () => {
  const out = await erg(['clusters', 'show', 'gh'], { api: routes({ 'GET /v1/clusters/gh': { status: 200, body: view(STORED) } }) });
  expect(out.code).toBe(0);
  // renderFields: the label, padded, then the value; the report's own lines indented under it.
  const value = (label: string) => out.stdout.split('\n').filter((l) => l.trimStart().startsWith(`${label}  `)).map((l) => l.trim().slice(label.length).trim());
  expect(value('Node report')).toEqual([`gh-1, taken ${REPORT.time} (1.5 s sampled; stored 2026-12-04T18:00:00.000Z): 2 problem(s)`]);
  expect(value('Stack')).toEqual(['driver 535.183.01-fake, NVML 12.535.183.01, CUDA 12.2, DCGM none']);
  expect(value('Floor power-scope-fields')).toEqual(['ok (NVML 12.2 (R535))']);
  expect(value('Floor gpm-c2c')).toEqual(['MISSING (NVML 12.9 (R575))']);
  expect(value('Floor dcgm-c2c')).toEqual(['unknown (DCGM 4.1.0)']);
  expect(value('Counter module0.energy')).toEqual(['FAILED: -21.95 % against ∫module0.power']);
  expect(value('Counter module1.energy')).toEqual(['not compared (no power reading of its scope)']);
  expect(value('GPU + Grace ≤ module0')).toEqual(['FAILED (16 of 16 timestamps over)']);
  expect(value('Problem')).toEqual([
    'module0.energy and the integral of module0.power differ by -21.9 % (more than 5 %)',
    'gpu0.power + grace0.power > module0.power + 1 % at 16 of 16 timestamps',
  ]);
});

test('erg clusters show without a report says how to upload one', async () => {
  const out = await erg(['clusters', 'show', 'gh'], { api: routes({ 'GET /v1/clusters/gh': { status: 200, body: view(null) } }) });
  expect(out.stdout).toMatch(/^Node report +none \(an admin uploads one: erg clusters node-report NAME FILE, see docs\/power-helper\.md\)$/m);
});

test('erg clusters node-report: sends the file as it is and prints what was stored; a file that is not JSON is a usage error before any request', async () => {
  const seen: RecordedRequest[] = [];
  const out = await erg(['clusters', 'node-report', 'gh', FIXTURE], { api: routes({ 'PUT /v1/clusters/gh/node-report': (req) => (seen.push(req), { status: 200, body: STORED }) }) });
  expect(out.code).toBe(0);
  expect(JSON.parse(seen[0]!.body)).toEqual(REPORT);
  expect(out.stdout).toMatch(/^Node report +gh-1, taken /);
  const bad = path.join(tempDir(), 'report.json');
  writeFileSync(bad, 'erg node doctor — gh-1 …\n');
  const refused = await erg(['clusters', 'node-report', 'gh', bad]);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toMatch(/cannot read .*report\.json as JSON/);
  expect(refused.requests).toEqual([]);
});
