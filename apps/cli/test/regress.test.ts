import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { erg, routes, tempDir, type RecordedRequest } from './helpers';
import { expectValidJunit, suiteCounts, testcases } from './junit';
import { resultsFixture } from './fixtures/results';
import { BASELINE, CANDIDATE, passVerdict, regressedVerdict } from './fixtures/verdicts';

const RUN_ID = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';

/** A suite run as GET /v1/suites/:name/runs/:id answers it. */
function suiteRun(over: Record<string, unknown> = {}) {
  return {
    id: RUN_ID, suite: 'nightly', campaignId: CANDIDATE, trigger: 'manual', baselineId: BASELINE, status: 'pass', reasons: [],
    campaign: { id: CANDIDATE, name: 'nightly', cluster: 'local', state: 'completed', runCounts: { completed: 10 }, totalRuns: 10, createdAt: '2026-11-30T11:00:00.000Z', cancelRequestedAt: null },
    verdict: passVerdict(), createdAt: '2026-11-30T11:00:00.000Z', finishedAt: '2026-11-30T11:30:00.000Z', webhook: null,
    ...over,
  };
}

const running = (runCounts: Record<string, number>, state = 'running') =>
  suiteRun({ status: 'running', verdict: null, finishedAt: null, campaign: { ...suiteRun().campaign, state, runCounts } });

describe('erg regress (scripted API)', () => {
  test.each([
    ['pass', 0, passVerdict()],
    ['improved', 0, { ...passVerdict(), status: 'improved' }],
    ['regressed', 1, regressedVerdict()],
    ['inconclusive', 2, { ...passVerdict(), status: 'inconclusive', reasons: ['too_noisy'] }],
  ])('the latest run %s → exit %i', async (status, code, verdict) => {
    const out = await erg(['regress', '--suite', 'nightly'], {
      api: routes({ 'GET /v1/suites/nightly/runs': { status: 200, body: { items: [suiteRun({ status, verdict })], total: 1 } } }),
    });
    expect(out.code).toBe(code);
    expect(out.stdout).toContain(`: ${status.toUpperCase()}`);
  });

  test('--trigger --wait starts a run, follows it on stderr until judged, then writes both reports', async () => {
    const dir = tempDir();
    const polls = [running({ queued: 10 }), running({ running: 4, completed: 6 }), running({ completed: 10 }, 'completed'), suiteRun({ status: 'regressed', verdict: regressedVerdict() })];
    const seen: RecordedRequest[] = [];
    const out = await erg(['regress', '--suite', 'nightly', '--trigger', '--wait', '--interval', '1', '--idempotency-key', 'pipeline-42', '--junit', 'j.xml', '--markdown', 'm.md'], {
      cwd: dir,
      api: routes({
        'POST /v1/suites/nightly/trigger': (req) => (seen.push(req), { status: 201, body: running({ pending: 10 }) }),
        [`GET /v1/suites/nightly/runs/${RUN_ID}`]: () => ({ status: 200, body: polls.shift() ?? suiteRun() }),
        [`GET /v1/campaigns/${CANDIDATE}/results`]: { status: 200, body: resultsFixture() },
      }),
    });
    expect(out.code).toBe(1);
    expect(seen[0]!.headers.get('idempotency-key')).toBe('pipeline-42');
    expect(out.stderr).toContain(`Started run ${RUN_ID}`);
    expect(out.stderr).toMatch(/running 6\/10 done/);
    expect(out.stderr).toMatch(/completed 10\/10 done .*; judging/);
    expect(out.stdout).toContain('REGRESSED');
    const xml = readFileSync(path.join(dir, 'j.xml'), 'utf8');
    await expectValidJunit(xml);
    expect(suiteCounts(xml).failures).toBe(1);
    const md = readFileSync(path.join(dir, 'm.md'), 'utf8');
    expect(md).toMatch(/^## ❌ REGRESSED/);
    // The campaign's own claims, read from its results, in both reports.
    const claims = resultsFixture().claims!;
    expect(md).toContain(`Claims of campaign ${CANDIDATE}: ${claims.summary.replace(/[[\]]/g, '\\$&')}.`);
    expect(xml).toContain('<property name="erg.claims.distinguishable" value="true"/>');
  });

  test('--wait gives up at --timeout with exit 2 and says the run goes on', async () => {
    const out = await erg(['regress', '--suite', 'nightly', '--wait', '--timeout', '30s', '--interval', '5', '--junit', 'j.xml'], {
      cwd: tempDir(),
      api: routes({
        'GET /v1/suites/nightly/runs': { status: 200, body: { items: [running({ running: 10 })], total: 1 } },
        [`GET /v1/suites/nightly/runs/${RUN_ID}`]: { status: 200, body: running({ running: 10 }) },
      }),
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('has no verdict after');
    expect(out.stderr).toContain('erg regress --suite nightly --wait');
  });

  test('a run still going without --wait: exit 2, no report written', async () => {
    const dir = tempDir();
    const out = await erg(['regress', '--suite', 'nightly', '--junit', 'j.xml'], {
      cwd: dir,
      api: routes({ 'GET /v1/suites/nightly/runs': { status: 200, body: { items: [running({ queued: 10 })], total: 1 } } }),
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('is still running');
    expect(() => readFileSync(path.join(dir, 'j.xml'))).toThrow();
  });

  test('a trigger the API refuses (422: the cluster is gone) is "could not decide": exit 2, never 1', async () => {
    const out = await erg(['regress', '--suite', 'nightly', '--trigger'], {
      api: routes({
        'POST /v1/suites/nightly/trigger': { status: 422, body: { error: { code: 'ERG_SUITE_UNKNOWN_CLUSTER', message: 'suite "nightly" runs on cluster "gone", which is not registered' } } },
      }),
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('not registered');
  });

  test('no run yet, an unknown suite, an unreachable API: exit 2 with what to do', async () => {
    const none = await erg(['regress', '--suite', 'nightly'], { api: routes({ 'GET /v1/suites/nightly/runs': { status: 200, body: { items: [], total: 0 } } }) });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--trigger --wait');
    const unknown = await erg(['regress', '--suite', 'nope'], { api: routes({}) });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('erg suites list');
    const down = await erg(['regress', '--suite', 'nightly']);
    expect(down.code).toBe(2);
    expect(down.stderr).toContain('cannot reach the API');
  });

  test('failed repetitions: the suite run is inconclusive though the completed ones pass; the reports say so', async () => {
    const dir = tempDir();
    const out = await erg(['regress', '--suite', 'nightly', '--junit', 'j.xml', '--markdown', 'm.md'], {
      cwd: dir,
      api: routes({ 'GET /v1/suites/nightly/runs': { status: 200, body: { items: [suiteRun({ status: 'inconclusive', reasons: ['runs_failed'] })], total: 1 } } }),
    });
    expect(out.code).toBe(2);
    expect(out.stdout).toContain('runs_failed: some repetitions did not complete');
    const xml = readFileSync(path.join(dir, 'j.xml'), 'utf8');
    await expectValidJunit(xml);
    expect(testcases(xml)[0]).toMatchObject({ classname: 'erg.nightly', name: 'campaign', outcome: 'error', type: 'inconclusive', message: 'inconclusive: runs_failed' });
    expect(xml).toContain('<property name="erg.verdict" value="inconclusive"/>');
    expect(readFileSync(path.join(dir, 'm.md'), 'utf8')).toMatch(/^## ⚠️ INCONCLUSIVE/);
  });

  test('a sequential suite run: both reports say its look, the runs against the fixed design and why it stopped', async () => {
    const dir = tempDir();
    const sequential = { look: 1, maxRepetitions: 6, spending: 'obrien-fleming', runsUsed: 6, runsFixed: 12, stop: 'decided', configurations: [] };
    const out = await erg(['regress', '--suite', 'nightly', '--junit', 'j.xml', '--markdown', 'm.md'], {
      cwd: dir,
      api: routes({ 'GET /v1/suites/nightly/runs': { status: 200, body: { items: [suiteRun({ sequential })], total: 1 } } }),
    });
    expect(out.code).toBe(0);
    const line = "sequential (obrien-fleming, up to 6 repetitions): look 1, 6 of the fixed design's 12 runs (50 %); stopped: every configuration was decided before the maximum";
    expect(out.stdout).toContain(line);
    const xml = readFileSync(path.join(dir, 'j.xml'), 'utf8');
    await expectValidJunit(xml);
    expect(xml).toContain(line);
    expect(readFileSync(path.join(dir, 'm.md'), 'utf8')).toContain(line);
  });

  test('the first run of a suite (no baseline) passes; JUnit holds one passing "baseline" case', async () => {
    const dir = tempDir();
    const out = await erg(['regress', '--suite', 'nightly', '--junit', 'j.xml', '--json'], {
      cwd: dir,
      api: routes({ 'GET /v1/suites/nightly/runs': { status: 200, body: { items: [suiteRun({ baselineId: null, verdict: null, reasons: ['no_baseline'] })], total: 1 } } }),
    });
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ status: 'pass', reasons: ['no_baseline'] });
    const xml = readFileSync(path.join(dir, 'j.xml'), 'utf8');
    await expectValidJunit(xml);
    expect(testcases(xml)).toEqual([expect.objectContaining({ name: 'baseline', outcome: null })]);
  });

  test('usage: --suite is required; --idempotency-key needs --trigger; a bad --timeout is named', async () => {
    expect((await erg(['regress'])).code).toBe(2);
    const key = await erg(['regress', '--suite', 'x', '--idempotency-key', 'k']);
    expect(key.code).toBe(2);
    expect(key.stderr).toContain('only goes with --trigger');
    const timeout = await erg(['regress', '--suite', 'x', '--timeout', 'soon']);
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain('90m, 6h');
  });
});

describe('erg suites (scripted API)', () => {
  test('apply PUTs the file as written to the name inside it', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'suite.yaml');
    writeFileSync(file, 'name: nightly-gemm # the suite\ncampaign:\n  name: x\n  cluster: local\n  run: "true"\n');
    const seen: RecordedRequest[] = [];
    const suite = {
      id: RUN_ID, name: 'nightly-gemm', description: null, cluster: 'local', campaign: {}, schedule: null,
      baseline: { policy: 'last-passing', campaignId: null }, regression: { threshold: 0.05, alpha: 0.05, minRepetitions: 3, maxCv: 0.25 },
      webhook: null, lastRun: null, createdAt: '2026-11-30T11:00:00.000Z', updatedAt: '2026-11-30T11:00:00.000Z',
    };
    const out = await erg(['suites', 'apply', file], { api: routes({ 'PUT /v1/suites/nightly-gemm': (req) => (seen.push(req), { status: 201, body: suite }) }) });
    expect(out.code).toBe(0);
    expect(seen[0]!.headers.get('content-type')).toBe('application/yaml');
    expect(seen[0]!.body).toBe(readFileSync(file, 'utf8'));
    expect(out.stdout).toContain('Suite nightly-gemm stored');
  });

  test('a refused suite lists every issue with its path: exit 1', async () => {
    const dir = tempDir();
    const file = path.join(dir, 's.json');
    writeFileSync(file, JSON.stringify({ name: 'bad', campaign: {} }));
    const out = await erg(['suites', 'apply', file], {
      api: routes({
        'PUT /v1/suites/bad': {
          status: 400,
          body: { error: { code: 'ERG_VALIDATION', message: 'invalid suite: campaign.name: required', issues: [{ path: 'campaign.name', code: 'required', message: 'required' }] } },
        },
      }),
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('campaign.name: required');
  });
});
