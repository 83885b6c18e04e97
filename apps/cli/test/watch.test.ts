import { doneRuns, EtaEstimator, progressBar, progressText } from '@erg/cli';
import { ANSI, CAMPAIGN_ID, erg, routes } from './helpers';

const T0 = Date.parse('2026-11-30T12:00:00Z');

describe('progress', () => {
  test('done counts every terminal state', () => {
    expect(doneRuns({ completed: 2, failed: 1, cancelled: 1, timeout: 1, node_fail: 1, oom: 1, running: 5, pending: 3 })).toBe(7);
  });

  test('the ETA waits for a finished run, then uses the throughput', () => {
    const eta = new EtaEstimator(T0);
    expect(eta.observe(T0 + 10_000, 0, 10)).toBeNull();
    // Runs finished since the first poll: 2 runs in 20 s → 8 left take 80 s.
    expect(eta.observe(T0 + 30_000, 2, 10)).toBeCloseTo(80);
    expect(eta.observe(T0 + 40_000, 10, 10)).toBe(0);
  });

  test('attaching to a half-done campaign: the rate since its creation, until runs finish while watching', () => {
    const eta = new EtaEstimator(T0);
    // 5 of 10 done in the first 100 s → 5 left take 100 s.
    expect(eta.observe(T0 + 100_000, 5, 10)).toBeCloseTo(100);
    expect(eta.observe(T0 + 110_000, 5, 10)).toBeCloseTo(110);
    // 1 more in 10 s since the first poll → 4 left take 40 s.
    expect(eta.observe(T0 + 110_000, 6, 10)).toBeCloseTo(40);
  });

  test('the line and the bar', () => {
    expect(progressText({ done: 0, total: 8, runCounts: { pending: 8 }, elapsedS: 3, etaS: null })).toBe('0/8 runs done (0.0 %) · pending 8 · elapsed 3 s · ETA: estimating');
    expect(progressText({ done: 5, total: 8, runCounts: { failed: 1, completed: 4, running: 3 }, elapsedS: 42, etaS: 25.2 })).toBe(
      '5/8 runs done (62.5 %) · running 3, completed 4, failed 1 · elapsed 42 s · ETA 25 s',
    );
    expect(progressBar(5, 8, 8)).toBe('█████░░░');
    expect(progressBar(0, 0, 4)).toBe('████');
  });
});

/** A campaign that moves one step per poll through `steps`, then stays at the last. */
function scripted(steps: { state: string; runCounts: Record<string, number> }[]) {
  let poll = 0;
  return routes({
    [`GET /v1/campaigns/${CAMPAIGN_ID}`]: () => {
      const step = steps[Math.min(poll++, steps.length - 1)]!;
      return { status: 200, body: { id: CAMPAIGN_ID, name: 'sweep', cluster: 'local', totalRuns: 4, createdAt: '2026-11-30T12:00:00.000Z', cancelRequestedAt: null, ...step } };
    },
  });
}

const TO_COMPLETION = [
  { state: 'pending', runCounts: { pending: 4 } },
  { state: 'running', runCounts: { running: 2, queued: 2 } },
  { state: 'running', runCounts: { running: 2, queued: 2 } },
  { state: 'running', runCounts: { completed: 2, running: 2 } },
  { state: 'completed', runCounts: { completed: 4 } },
];

describe('erg watch', () => {
  test('not a terminal: one plain line per change of the counts, no escape codes, exit 0 when all completed', async () => {
    const out = await erg(['watch', CAMPAIGN_ID, '--interval', '5'], { api: scripted(TO_COMPLETION), env: { FORCE_COLOR: '1' } });
    expect(out.code).toBe(0);
    expect(out.stdout).not.toMatch(ANSI);
    expect(out.stdout).not.toContain('\r');
    expect(out.stdout.trimEnd().split('\n')).toEqual([
      '0/4 runs done (0.0 %) · pending 4 · elapsed 0 s · ETA: estimating',
      '0/4 runs done (0.0 %) · queued 2, running 2 · elapsed 5 s · ETA: estimating',
      '2/4 runs done (50.0 %) · running 2, completed 2 · elapsed 15 s · ETA 15 s',
      '4/4 runs done (100.0 %) · completed 4 · elapsed 20 s',
      'Campaign sweep completed after 20 s: completed 4.',
    ]);
    expect(out.requests).toHaveLength(5);
  });

  test('a campaign that ends failed or cancelled: exit 1', async () => {
    const failed = await erg(['watch', CAMPAIGN_ID], { api: scripted([{ state: 'failed', runCounts: { completed: 3, failed: 1 } }]) });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain(`Campaign sweep failed: completed 3, failed 1. See the runs that did not complete: erg runs ${CAMPAIGN_ID}`);
    const cancelled = await erg(['watch', CAMPAIGN_ID], { api: scripted([{ state: 'cancelled', runCounts: { cancelled: 4 } }]) });
    expect(cancelled.code).toBe(1);
  });

  test('on a terminal: redrawn in place with a bar', async () => {
    const out = await erg(['watch', CAMPAIGN_ID], { api: scripted(TO_COMPLETION), tty: true, columns: 200 });
    expect(out.code).toBe(0);
    const frames = out.stdout.split('\r\x1b[2K').filter(Boolean);
    expect(frames).toHaveLength(5);
    expect(frames[0]).toContain('░░░░');
    expect(frames[4]).toContain('████████████████████████');
  });

  test('a narrow terminal gets a cut line, so that redrawing still works', async () => {
    const out = await erg(['watch', CAMPAIGN_ID], { api: scripted(TO_COMPLETION), tty: true, columns: 40 });
    for (const frame of out.stdout.split('\r\x1b[2K').filter(Boolean).slice(0, -1)) expect([...frame].length).toBeLessThanOrEqual(39);
  });

  test('Ctrl-C stops watching, says the campaign goes on, exit 130, no cancel request', async () => {
    const out = await erg(['watch', CAMPAIGN_ID], { api: scripted([{ state: 'running', runCounts: { running: 4 } }]), onSleep: (_, interrupt) => interrupt() });
    expect(out.code).toBe(130);
    expect(out.stderr).toContain('Stopped watching; the campaign goes on (it was not cancelled)');
    expect(out.requests.every((r) => r.method === 'GET')).toBe(true);
  });

  test('a few failed polls are tolerated; a lost campaign is not', async () => {
    let poll = 0;
    const flaky = scripted(TO_COMPLETION);
    const out = await erg(['watch', CAMPAIGN_ID], { api: (req) => (poll++ === 1 ? { status: 503, body: { error: { code: 'X', message: 'restarting' } } } : flaky(req)) });
    expect(out.code).toBe(0);
    expect(out.stderr).toMatch(/warning: the API failed \(503 X\): restarting; trying again \(1\/4\)/);
    const gone = await erg(['watch', CAMPAIGN_ID], { api: () => ({ status: 404, body: { error: { code: 'ERG_NOT_FOUND', message: 'campaign not found' } } }) });
    expect(gone.code).toBe(2);
  });

  test('submit --watch follows the new campaign and prints its results', async () => {
    const { resultsFixture } = await import('./fixtures/results');
    const watch = scripted(TO_COMPLETION);
    const api = routes({
      'POST /v1/campaigns': { status: 201, body: { id: CAMPAIGN_ID, name: 'sweep', cluster: 'local', state: 'pending', runCounts: { pending: 4 }, totalRuns: 4, createdAt: '2026-11-30T12:00:00.000Z', cancelRequestedAt: null, configurations: [{ key: 'a=1', parameters: {} }, { key: 'a=2', parameters: {} }], runs: [] } },
      [`GET /v1/campaigns/${CAMPAIGN_ID}`]: watch,
      [`GET /v1/campaigns/${CAMPAIGN_ID}/results`]: { status: 200, body: resultsFixture() },
    });
    const out = await erg(['submit', `${__dirname}/../../../examples/quickstart.yaml`, '--watch'], { api });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('2 configurations × 2 repetitions = 4 runs on cluster local');
    expect(out.stdout).toContain('Campaign sweep completed');
    expect(out.stdout).toMatch(/marks\s+mode\s+param_n\s+n\s+time/);
  });
});

describe('erg watch on an adaptive campaign', () => {
  const decisions = (open: boolean, undecided: string[], runsUsed: number, dropped: number) => ({
    campaignId: CAMPAIGN_ID,
    strategy: { kind: 'adaptive', minRepetitions: 2, maxRepetitions: 5, targetRelativeHalfWidth: 0.05, confidence: 0.95, objectives: ['time', 'energy'] },
    open, stop: open ? null : `every configuration is decided after ${runsUsed} runs`, runsUsed, gridRuns: 15, undecided, budget: { maxRuns: null, runsLeft: null },
    decisions: Array.from({ length: dropped }, (_, i) => ({ key: `d${i}`, status: 'dropped', n: 2, reason: 'r', by: 'x', p: 0.001, relativeHalfWidth: null, decidedAt: '2026-11-30T12:00:00.000Z', runsUsed: 6 })),
  });
  test('each line says what is undecided and the runs against the grid, with no ETA for runs not planned yet; then why it stopped', async () => {
    let poll = 0;
    const steps = [
      { campaign: { state: 'running', totalRuns: 6, runCounts: { running: 6 } }, decisions: decisions(true, [], 6, 0) },
      { campaign: { state: 'running', totalRuns: 8, runCounts: { completed: 6, queued: 2 } }, decisions: decisions(true, ['a', 'b'], 8, 1) },
      { campaign: { state: 'completed', totalRuns: 8, runCounts: { completed: 8 } }, decisions: decisions(false, [], 8, 1) },
    ];
    let at = 0;
    const api = routes({
      [`GET /v1/campaigns/${CAMPAIGN_ID}`]: () => {
        at = Math.min(poll++, steps.length - 1);
        return { status: 200, body: { id: CAMPAIGN_ID, name: 'adaptive', cluster: 'local', createdAt: '2026-11-30T12:00:00.000Z', cancelRequestedAt: null, spec: { strategy: { kind: 'adaptive' } }, ...steps[at]!.campaign } };
      },
      [`GET /v1/campaigns/${CAMPAIGN_ID}/decisions`]: () => ({ status: 200, body: steps[at]!.decisions }),
    });
    const out = await erg(['watch', CAMPAIGN_ID, '--interval', '5'], { api });
    expect(out.code).toBe(0);
    expect(out.stdout.trimEnd().split('\n')).toEqual([
      "0/6 runs done (0.0 %) · running 6 · elapsed 0 s · adaptive: 0 undecided, 0 dropped, 6 of the grid's 15 runs",
      "6/8 runs done (75.0 %) · queued 2, completed 6 · elapsed 5 s · adaptive: 2 undecided, 1 dropped, 8 of the grid's 15 runs",
      "8/8 runs done (100.0 %) · completed 8 · elapsed 10 s · adaptive: every configuration is decided after 8 runs, 1 dropped, 8 of the grid's 15 runs",
      'Campaign adaptive completed after 10 s: completed 8.',
    ]);
  });
});
