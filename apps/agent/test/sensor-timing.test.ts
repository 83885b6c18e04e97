import { medianSpacing, probeUpdatePeriods, UPDATE_PROBE, type ProbeOptions } from '../src/sources/sensor-timing';

// The update-period probe against simulated counters on a simulated clock: what it reports, and
// when it declines to (too few changes, or a change at every read).

/** A clock that advances only when the probe sleeps (reads take no time), and counters on it. */
function simulated(options: Partial<ProbeOptions> = {}) {
  let now = 0;
  const probe: ProbeOptions = { ...UPDATE_PROBE, now: () => now, sleep: (ms) => (now += ms), ...options };
  /** A counter that steps every `periodMs` from `phaseMs` on. */
  const counter = (periodMs: number, phaseMs = 0) => () => Math.floor((now + phaseMs) / periodMs);
  return { probe, counter };
}

describe('probeUpdatePeriods', () => {
  test('reports each counter\'s median change spacing, read every pollMs', () => {
    const { probe, counter } = simulated();
    const [a, b] = probeUpdatePeriods([counter(20, 7), counter(100, 30)], probe);
    expect(a).toMatchObject({ updateMs: 20, changes: 9 });
    // 100 ms: the 800 ms budget ends the probe with 8 changes (7 spacings), enough to report.
    expect(b).toMatchObject({ updateMs: 100, changes: 8 });
    expect(b?.spanMs).toBe(800);
  });

  test('the median resists a late read: one delayed change moves two spacings, not the result', () => {
    let now = 0;
    let reads = 0;
    const sleep = (ms: number) => {
      now += ms;
      reads += 1;
      if (reads === 70) now += 12; // the thread was descheduled once
    };
    const [p] = probeUpdatePeriods([() => Math.floor(now / 25)], { ...UPDATE_PROBE, now: () => now, sleep });
    expect(p?.updateMs).toBe(25);
  });

  test('a counter that changes at every read is not resolved: it declares nothing', () => {
    const { probe } = simulated();
    let k = 0;
    const [p] = probeUpdatePeriods([() => (k += 1)], probe);
    expect(p).toMatchObject({ updateMs: null, changes: 9, reads: 9 });
  });

  test('too few changes within the budget (a slow or idle counter), or a read that always fails, declares nothing', () => {
    const { probe, counter } = simulated();
    const [slow, stuck, failing] = probeUpdatePeriods([counter(300), () => 42, () => Number.NaN], probe);
    expect(slow).toMatchObject({ updateMs: null, changes: 2 });
    expect(stuck).toMatchObject({ updateMs: null, changes: 0 });
    expect(failing).toMatchObject({ updateMs: null, changes: 0 });
  });

  test('medianSpacing', () => {
    expect(medianSpacing([])).toBeNull();
    expect(medianSpacing([5])).toBeNull();
    expect(medianSpacing([0, 10, 30])).toBe(15);
    expect(medianSpacing([0, 10, 20, 100])).toBe(10);
  });
});
