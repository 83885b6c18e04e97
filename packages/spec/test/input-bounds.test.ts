// Inputs that answered 500, or were silently changed, before their bounds (issue 27 §3): a
// counter range no counter has, windows a bigint of nanoseconds cannot hold, keys JavaScript
// objects treat specially, the same objective twice. Each is refused with the field's path.
import {
  decodeCampaignText, decodeTelemetryValue, MAX_METRIC_MAGNITUDE, MAX_WRAP_AT, parseCooled, parseIdleWindow, parseTiming, RESERVED_KEYS, reservedKeyIssue, RunFinish,
  issuesFromZodError, humanErrorMap,
} from '../src';
import { issueAt, issuesOf, minimal, specOf } from './helpers';

describe('a counter range (wrapAt) is one a counter can have', () => {
  const now = Date.UTC(2026, 10, 30, 12);
  const bounds = { minT: now - 60_000, maxT: now + 60_000 };
  const batch = (wrapAt: number) => ({
    node: 'n1', seq: 0,
    samples: [{ sensor: 'cpu0.energy', t: [now, now + 1000], v: [20, 10] }],
    sensors: [{ sensor: 'cpu0.energy', source: 'rapl', unit: 'J', wrapAt }],
  });

  it('refuses 1e308 at sensors[0].wrapAt, saying what the widest range is', () => {
    const result = decodeTelemetryValue(batch(1e308), bounds);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toEqual([
      { path: 'sensors[0].wrapAt', code: 'too_big', message: `a counter range: at most ${MAX_WRAP_AT} J (a 64-bit count of µJ, the widest range a kernel reports)` },
    ]);
  });

  it('accepts the widest range the agent can declare (a 64-bit max_energy_range_uj) and a RAPL package\'s', () => {
    expect(decodeTelemetryValue(batch(Number('18446744073709551615') / 1e6), bounds).ok).toBe(true);
    expect(decodeTelemetryValue(batch(262_143.32885), bounds).ok).toBe(true);
  });
});

describe("an import's window (POST /v1/runs/{id}/finish) is a physical one", () => {
  const issuesOfFinish = (body: unknown) => {
    const result = RunFinish.safeParse(body, { error: humanErrorMap });
    return result.success ? [] : issuesFromZodError(result.error);
  };
  const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
  const now = new Date().toISOString();

  it('accepts a window of the last hour', () => {
    expect(issuesOfFinish({ startedAt: hourAgo, endedAt: now, metrics: { steps: 50 } })).toEqual([]);
  });

  it.each([
    ['endedAt in year 9999', { startedAt: hourAgo, endedAt: '9999-12-31T00:00:00Z' }, 'endedAt', /^9999-12-31T00:00:00\.000Z is in the future/],
    ['startedAt in year 1', { startedAt: '0001-01-01T00:00:00Z', endedAt: now }, 'startedAt', /^0001-01-01T00:00:00\.000Z is before 2000-01-01T00:00:00\.000Z/],
    ['an end before the start', { startedAt: now, endedAt: hourAgo }, 'endedAt', /^must be after startedAt$/],
    ['a window of more than a year', { startedAt: '2020-01-01T00:00:00Z', endedAt: '2022-01-01T00:00:00Z' }, 'endedAt', /^the window is 731\.0 days long; at most 366 days$/],
  ])('refuses %s at its field', (_what, body, path, message) => {
    expect(issuesOfFinish(body)).toEqual([{ path, code: 'custom', message: expect.stringMatching(message) }]);
  });

  it(`refuses a figure of merit beyond ±${MAX_METRIC_MAGNITUDE}, whose sum over runs would overflow`, () => {
    expect(issuesOfFinish({ startedAt: hourAgo, endedAt: now, metrics: { steps: 1e308 } })).toEqual([
      { path: 'metrics.steps', code: 'too_big', message: `at most ${MAX_METRIC_MAGNITUDE} (no figure of merit is larger)` },
    ]);
  });
});

describe('times a job writes into its run directory are kept only when a bigint of nanoseconds holds them', () => {
  it('reads a time past 2262 (or not a whole number) as missing, and an exit code no shell gives as none', () => {
    expect(parseTiming('start_ns=99999999999999999999\nend_ns=1700000002500000000\nexit_code=99999999999\n')).toEqual({
      startNs: null, endNs: 1_700_000_002_500_000_000n, exitCode: null,
    });
    expect(parseTiming('start_ns=-5\nexit_code=-1\n')).toEqual({ startNs: null, endNs: null, exitCode: null });
    expect(parseIdleWindow('idle_start_ns=9223372036854775808\nidle_end_ns=9223372036854775807\n')).toEqual({ idleStartNs: null, idleEndNs: 9_223_372_036_854_775_807n });
    expect(parseCooled('wait_start_ns=123456789012345678901\nwait_end_ns=1700000000000000000\n')).toMatchObject({ waitStartNs: null, waitEndNs: 1_700_000_000_000_000_000n });
  });
});

describe('keys JavaScript objects treat specially (__proto__, constructor, prototype)', () => {
  const yaml = (lines: string[]) => lines.join('\n') + '\n';

  it('are refused in a YAML spec at their path, where __proto__ under files made the file vanish', () => {
    const text = yaml(['name: s', 'cluster: local', 'run: ./bench', 'files:', '  __proto__: "x"', '  ok.txt: "y"']);
    expect(decodeCampaignText(text, 'yaml')).toEqual({
      ok: false,
      issues: [{ path: 'files.__proto__', code: 'reserved_name', message: expect.stringContaining('"__proto__" is a reserved name') }],
    });
  });

  it('are refused in a JSON spec the same way (JSON.parse makes __proto__ an own key)', () => {
    const decoded = decodeCampaignText('{"name":"s","cluster":"local","run":"./bench","files":{"__proto__":"x"}}', 'json');
    expect(decoded).toEqual({ ok: false, issues: [{ path: 'files.__proto__', code: 'reserved_name', message: expect.any(String) }] });
  });

  it("are refused in a suite's YAML at their path within its campaign", () => {
    const text = yaml(['name: nightly', 'campaign:', '  name: s', '  cluster: local', '  run: ./bench', '  files:', '    __proto__: "x"']);
    expect(decodeCampaignText(text, 'yaml')).toMatchObject({ ok: false, issues: [{ path: 'campaign.files.__proto__', code: 'reserved_name' }] });
  });

  it.each(RESERVED_KEYS.filter((k) => k !== '__proto__'))('refuses %s as a parameter name and deep in an exclude entry', (key) => {
    expect(issueAt(issuesOf({ ...minimal, parameters: { [key]: [1, 2] } }), `parameters.${key}`)).toMatchObject({ code: 'reserved_name' });
    expect(reservedKeyIssue({ exclude: [{ a: 1 }, { [key]: 2 }] })).toMatchObject({ path: `exclude[1].${key}`, code: 'reserved_name' });
  });

  it('leaves values named so alone: only keys are refused', () => {
    expect(reservedKeyIssue({ parameters: { kind: ['constructor', 'prototype', '__proto__'] } })).toBeNull();
  });
});

describe('the two objectives of a Pareto front differ', () => {
  it.each(['adaptive', 'search'])('refuses strategy.objectives: [time, time] for %s, at the second', (kind) => {
    const strategy = { kind, objectives: ['time', 'time'], ...(kind === 'search' ? { budget: { maxRuns: 20 } } : {}) };
    expect(issueAt(issuesOf({ ...minimal, parameters: { n: [1, 2] }, strategy }), 'strategy.objectives[1]')).toEqual({
      path: 'strategy.objectives[1]', code: 'duplicate_value', message: '"time" is objectives[0] already: a Pareto front needs two different objectives, of time, energy, edp, carbon, cost',
    });
  });

  it('accepts two different ones', () => {
    expect(specOf({ ...minimal, parameters: { n: [1, 2] }, strategy: { kind: 'adaptive', objectives: ['time', 'carbon'] } }).strategy).toMatchObject({ objectives: ['time', 'carbon'] });
  });
});
