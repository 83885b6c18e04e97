import { seededRandom } from '@erg/testkit';
import { plan, type AdaptiveSettings, type ConfigurationRuns } from '../src';

const SETTINGS: AdaptiveSettings = { minRepetitions: 2, maxRepetitions: 6, targetRelativeHalfWidth: 0.02, confidence: 0.95 };
const SPENT = { runs: 0, nodeHours: 0, energyKWh: 0 };

/** Runs of a configuration with true (time, energy) and lognormal noise of `cv`. */
function runsOf(u: () => number, truth: [number, number], n: number, cv: number): [number, number][] {
  const sigma = Math.sqrt(Math.log(1 + cv * cv));
  const z = () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
  return Array.from({ length: n }, () => [truth[0] * Math.exp(sigma * z()), truth[1] * Math.exp(sigma * z())] as [number, number]);
}
const config = (key: string, runs: [number, number][], pending = 0): ConfigurationRuns => ({ key, runs, pending });

describe('plan', () => {
  test('first the minimum repetitions of every configuration, then decisions', () => {
    const p = plan(SETTINGS, [config('a', []), config('b', [[10, 100]]), config('c', [], 1)], SPENT);
    expect(p.submit).toEqual([{ key: 'a', runs: 2 }, { key: 'b', runs: 1 }, { key: 'c', runs: 1 }]);
    expect(p.configurations.map((d) => d.status)).toEqual(['sampling', 'sampling', 'sampling']);
    expect(p.stop).toBeNull();
  });

  test('a configuration clearly worse on both objectives is dropped, naming the one that dominates it', () => {
    const u = seededRandom(1);
    const configs = [
      config('fast', runsOf(u, [100, 2000], 3, 0.02)),
      config('frugal', runsOf(u, [200, 1000], 3, 0.02)),
      config('worse', runsOf(u, [260, 2600], 3, 0.02)),
    ];
    const p = plan(SETTINGS, configs, SPENT);
    const worse = p.configurations.find((d) => d.key === 'worse')!;
    expect(worse.status).toBe('dropped');
    expect(['fast', 'frugal']).toContain(worse.by);
    expect(worse.p).toBeLessThan(p.alpha);
    expect(worse.reason).toMatch(new RegExp(`^worse dropped after 3 runs: dominated by ${worse.by} on time and energy, p < 0\\.0\\d+`));
    // The two ends of the trade-off are each better than everything else on one objective: settled on the front.
    expect(p.configurations.filter((d) => d.key !== 'worse').map((d) => d.status)).toEqual(['front', 'front']);
    expect(p.submit).toEqual([]);
    expect(p.stop).toEqual({ why: 'decided', reason: 'every configuration is decided after 0 runs' });
  });

  test('a close call keeps sampling, one run at a time, until it is decided or reaches the maximum', () => {
    const u = seededRandom(2);
    const configs = [config('a', [[100, 1000], [104, 1041]]), config('b', [[101, 1002], [103, 1037]])];
    const p = plan(SETTINGS, configs, SPENT);
    expect(p.configurations.map((d) => d.status)).toEqual(['sampling', 'sampling']);
    expect(p.submit).toEqual([{ key: expect.any(String), runs: 1 }, { key: expect.any(String), runs: 1 }]);
    expect(p.configurations[0]!.reason).toMatch(/^a: undecided after 2 runs \(time ±\d+\.\d %, energy ±\d+\.\d %\)$/);
    // With its maximum reached it is exhausted; the campaign then stops, decided.
    const full = plan(SETTINGS, [config('a', runsOf(u, [100, 1000], 6, 0.05)), config('b', runsOf(u, [101, 1001], 6, 0.05))], SPENT);
    expect(full.configurations.map((d) => d.status)).toEqual(['exhausted', 'exhausted']);
    expect(full.stop?.why).toBe('decided');
    // With a run of it in flight, it waits for that run.
    const waiting = plan(SETTINGS, [config('a', runsOf(u, [100, 1000], 5, 0.05), 1), config('b', runsOf(u, [101, 1001], 6, 0.05))], SPENT);
    expect(waiting.configurations[0]!.status).toBe('sampling');
    expect(waiting.submit).toEqual([]);
    expect(waiting.stop).toBeNull();
  });

  test('precise: intervals within the target stop its repetitions though its membership is open', () => {
    const u = seededRandom(3);
    const configs = [config('a', runsOf(u, [100, 1000], 5, 0.002)), config('b', runsOf(u, [100, 1000], 5, 0.002))];
    const p = plan({ ...SETTINGS, targetRelativeHalfWidth: 0.05 }, configs, SPENT);
    expect(p.configurations.map((d) => d.status)).toEqual(['precise', 'precise']);
    expect(p.configurations[0]!.reason).toMatch(/^a settled after 5 runs: its 95 % intervals are within ±5\.0 %/);
  });

  test('decisions already taken are kept', () => {
    const u = seededRandom(4);
    const previous = { key: 'a', status: 'dropped' as const, n: 2, reason: 'a dropped after 2 runs: dominated by b on time and energy, p < 0.001', by: 'b', p: 1e-4, relativeHalfWidth: null };
    const p = plan(SETTINGS, [{ ...config('a', runsOf(u, [100, 1000], 2, 0.05)), previous }, config('b', runsOf(u, [100, 1000], 2, 0.05))], SPENT);
    expect(p.configurations[0]).toBe(previous);
  });

  test('the budget caps what is submitted, counting runs in flight at their estimates, and stops the campaign', () => {
    const perRun = { nodeHours: 2, energyKWh: 1 };
    const configs = [{ ...config('a', []), perRun }, { ...config('b', []), perRun }];
    expect(plan({ ...SETTINGS, budget: { maxRuns: 3 } }, configs, SPENT).submit).toEqual([{ key: 'a', runs: 2 }, { key: 'b', runs: 1 }]);
    expect(plan({ ...SETTINGS, budget: { maxNodeHours: 5 } }, configs, SPENT).submit).toEqual([{ key: 'a', runs: 2 }]);
    expect(plan({ ...SETTINGS, budget: { maxEnergyKWh: 3 } }, [{ ...config('a', [], 2), perRun }, { ...config('b', []), perRun }], SPENT).submit).toEqual([{ key: 'b', runs: 1 }]);
    const u = seededRandom(5);
    const over = plan({ ...SETTINGS, budget: { maxRuns: 4 } }, [config('a', runsOf(u, [100, 1000], 2, 0.05)), config('b', runsOf(u, [101, 1001], 2, 0.05))], { runs: 4, nodeHours: 0, energyKWh: 0 });
    expect(over.submit).toEqual([]);
    expect(over.stop).toEqual({ why: 'budget', reason: 'the budget allows no more runs after 4 (2 configuration(s) undecided)' });
    expect(plan({ ...SETTINGS, budget: { maxRuns: 4 } }, [config('a', [], 2)], { runs: 4, nodeHours: 0, energyKWh: 0 }).stop).toBeNull();
  });

  test('runs without figures count against the maximum: a configuration that keeps failing ends exhausted', () => {
    const u = seededRandom(6);
    const ok = config('ok', runsOf(u, [100, 1000], 2, 0.01));
    const retry = plan(SETTINGS, [ok, { ...config('flaky', [], 0), failed: 1 }], SPENT);
    expect(retry.submit).toContainEqual({ key: 'flaky', runs: 2 });
    const last = plan(SETTINGS, [ok, { ...config('flaky', [[100, 1000]], 0), failed: 4 }], SPENT);
    expect(last.submit).toContainEqual({ key: 'flaky', runs: 1 });
    const done = plan(SETTINGS, [ok, { ...config('flaky', [[100, 1000]], 0), failed: 5 }], SPENT);
    expect(done.configurations[1]).toMatchObject({ status: 'exhausted', reason: 'flaky reached 6 runs with 1 measured (5 without figures): too few to decide anything' });
    expect(done.submit.find((s) => s.key === 'flaky')).toBeUndefined();
  });

  test('no repetition beyond the first runs while another configuration still waits for its first', () => {
    const u = seededRandom(7);
    const p = plan(SETTINGS, [config('done', runsOf(u, [100, 1000], 2, 0.05)), config('late', [[101, 1001]], 1)], SPENT);
    expect(p.configurations[0]!.status).toBe('sampling');
    expect(p.submit).toEqual([]);
    expect(p.stop).toBeNull();
  });

  test('futility (when asked for): a close call that even the maximum could not decide stops early, saying why', () => {
    // 1 % apart with 10 % noise: at 6 runs neither interval reaches ±2 % nor does any test pass.
    const u = seededRandom(8);
    const configs = [config('a', runsOf(u, [100, 1000], 2, 0.1)), config('b', runsOf(u, [101, 1010], 2, 0.1))];
    expect(plan(SETTINGS, configs, SPENT).configurations.map((d) => d.status)).toEqual(['sampling', 'sampling']);
    const futile = plan({ ...SETTINGS, futility: true }, configs, SPENT);
    expect(futile.configurations.map((d) => d.status)).toEqual(['exhausted', 'exhausted']);
    expect(futile.configurations[0]!.reason).toMatch(/^a stopped after 2 runs: even 6 would decide nothing at the differences and spread seen/);
    expect(futile.stop?.why).toBe('decided');
  });

  test('slots cap what is submitted at once, the first repetitions first', () => {
    const p = plan(SETTINGS, [config('a', []), config('b', []), config('c', [])], SPENT, { slots: 3 });
    expect(p.submit).toEqual([{ key: 'a', runs: 2 }, { key: 'b', runs: 1 }]);
  });

  test('bad settings and values are refused with what is wrong', () => {
    expect(() => plan({ ...SETTINGS, minRepetitions: 1 }, [], SPENT)).toThrow(/minRepetitions must be an integer ≥ 2, got 1/);
    expect(() => plan({ ...SETTINGS, maxRepetitions: 1 }, [], SPENT)).toThrow(/maxRepetitions must be an integer ≥ minRepetitions \(2\), got 1/);
    expect(() => plan(SETTINGS, [config('a', [[0, 1]])], SPENT)).toThrow(/configuration a: objective values must be finite and > 0, got \[0, 1\]/);
  });

  test('screening: one first run each, the most promising quarter completes its first runs, then what they dominate is dropped after 1 run', () => {
    const u = seededRandom(3);
    const S = { ...SETTINGS, screening: true };
    const keys = ['fast', 'frugal', 'mid', 'worse', 'awful', 'w2', 'w3', 'w4'];
    const truth: Record<string, [number, number]> = {
      fast: [100, 2000], frugal: [200, 1000], mid: [140, 1400], worse: [300, 3000], awful: [500, 5000], w2: [320, 3300], w3: [340, 3500], w4: [360, 3600],
    };
    // Off, every configuration gets its minimum at once; on, one run each first.
    expect(plan(SETTINGS, keys.map((k) => config(k, [])), SPENT).submit.every((s) => s.runs === 2)).toBe(true);
    const first = plan(S, keys.map((k) => config(k, [])), SPENT);
    expect(first.submit).toEqual(keys.map((key) => ({ key, runs: 1 })).sort((a, b) => (a.key < b.key ? -1 : 1)));
    // With a first run each: second runs go to the best Pareto layer first (a quarter: 2 of 8).
    const one = new Map(keys.map((k) => [k, runsOf(u, truth[k]!, 1, 0.02)]));
    const pilot = plan(S, keys.map((k) => config(k, one.get(k)!)), SPENT);
    expect(pilot.submit.map((x) => x.key).sort()).toEqual(['fast', 'frugal']);
    // Once those have theirs, the ones they clearly dominate are dropped after their one run, saying so.
    for (const k of ['fast', 'frugal']) one.get(k)!.push(...runsOf(u, truth[k]!, 1, 0.02));
    const screened = plan(S, keys.map((k) => config(k, one.get(k)!)), SPENT);
    const awful = screened.configurations.find((d) => d.key === 'awful')!;
    expect(awful).toMatchObject({ status: 'dropped', n: 1 });
    expect(awful.reason).toMatch(/^awful dropped after 1 run \(screening, with the pooled spread\): dominated by (fast|frugal) on time and energy, p < 0\.0\d+$/);
    // Those not dropped get the rest of their first runs; the dropped ones none.
    expect(screened.submit.map((x) => x.key)).not.toContain('awful');
    expect(screened.submit.map((x) => x.key)).toContain('mid');
    // Without screening nothing is decided below the minimum.
    expect(plan(SETTINGS, keys.map((k) => config(k, one.get(k)!)), SPENT).configurations.filter((d) => d.status === 'dropped')).toEqual([]);
  });

  test.each([false, true])('racing keeps its confidence (screening %s): among identical configurations, none is dropped in ≥ 95 %% of simulated campaigns', (screening) => {
    // 12 configurations with the same truth, 10 % noise, played to the end round by round: any
    // drop is a false one, and the campaign-wise chance of one must stay below 1 − confidence.
    const SETTINGS_ = { ...SETTINGS, screening };
    let campaignsWithAFalseDrop = 0;
    const campaigns = 200;
    for (let seed = 0; seed < campaigns; seed++) {
      const u = seededRandom(100 + seed);
      const keys = Array.from({ length: 12 }, (_, i) => `c${i}`);
      const runs = new Map(keys.map((k) => [k, [] as [number, number][]]));
      let previous = new Map<string, ReturnType<typeof plan>['configurations'][number]>();
      for (let round = 0; round < 20; round++) {
        const p = plan(SETTINGS_, keys.map((k) => ({ key: k, runs: runs.get(k)!, pending: 0, ...(previous.has(k) ? { previous: previous.get(k)! } : {}) })), SPENT);
        previous = new Map(p.configurations.map((d) => [d.key, d]));
        if (p.submit.length === 0) break;
        for (const s of p.submit) runs.get(s.key)!.push(...runsOf(u, [100, 1000], s.runs, 0.1));
      }
      if ([...previous.values()].some((d) => d.status === 'dropped')) campaignsWithAFalseDrop++;
    }
    expect(campaignsWithAFalseDrop / campaigns).toBeLessThanOrEqual(0.05);
  });
});
