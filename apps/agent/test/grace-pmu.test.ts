import fs from 'node:fs';
import path from 'node:path';
import type { spawn as spawnType } from 'node:child_process';
import { DATA_MOVEMENT_QUANTITIES } from '@erg/spec/sensors';
import { SensorDescription } from '@erg/spec';
import { waitFor } from '@erg/testkit';
import { createLogger } from '../src/log';
import { detectSources } from '../src/sources';
import { bytesPerSecond, detectGracePmu, PerfStatLoop, SCF_EVENTS, type ScfCounter } from '../src/sources/grace-pmu';
import { eventBase, eventModifiers, parsePerfStatLine } from '../src/sources/perf-stat';
import type { Source } from '../src/sources/types';
import { cleanupTempDirs, configFrom, copyFixtures, detectContext, FIXTURES, recordingSink, rewrite, tempDir } from './helpers';

// Grace's host memory traffic from its SCF uncore PMU through `perf stat`, against the FIXTURE
// test/fixtures/grace-pmu: a sysfs tree laid out like a 2-socket Grace node's
// /sys/bus/event_source/devices and a FAKE perf printing perf's CSV interval lines with invented
// counts. No Grace CPU exists where these tests run.

// Detection runs the fake perf (a probe interval of 100 ms, bash start-up) and the end-to-end test
// waits for a few of its intervals: seconds on a loaded 2-core machine.
jest.setTimeout(30_000);

const FIXTURE = path.join(FIXTURES, 'grace-pmu');
const FAKE = path.join(FIXTURE, 'perf');
const DEVICES = 'sys/bus/event_source/devices';
const RECORDED = fs.readFileSync(path.join(FIXTURE, 'stat-interval.csv'), 'utf8').split('\n').filter((l) => l !== '');
const ALL_EVENTS = 'nvidia_scf_pmu_0/cmem_rd_data/,nvidia_scf_pmu_0/cmem_wr_total_bytes/,nvidia_scf_pmu_1/cmem_rd_data/,nvidia_scf_pmu_1/cmem_wr_total_bytes/';

const started: Source[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
});
afterAll(cleanupTempDirs);

/** The fake with some environment variables set (a wrapper: Jest's process.env does not reach children). */
const fakeWith = (env: Record<string, string>, fake = FAKE): string => {
  const wrapper = path.join(tempDir(), 'perf');
  const vars = Object.entries(env).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ');
  fs.writeFileSync(wrapper, `#!/usr/bin/env bash\n${vars} exec ${JSON.stringify(fake)} "$@"\n`, { mode: 0o755 });
  return wrapper;
};
const contextFor = (root: string, perf: string, extra: Record<string, string | number> = {}) =>
  detectContext({ 'sysfs-root': root, 'procfs-root': path.join(root, 'proc'), perf, 'interval-ms': 100, ...extra });
const detect = (ctx: ReturnType<typeof detectContext>): Source | null => {
  const source = detectGracePmu(ctx);
  if (source) started.push(source);
  return source;
};

describe('perf stat CSV interval lines', () => {
  test('a line is time, count, unit, event, run time, running %: counts as perf printed them', () => {
    expect(parsePerfStatLine(RECORDED[0]!)).toEqual({ timeS: 1.000104, count: 2812792500, unit: '', event: 'nvidia_scf_pmu_0/cmem_rd_data/', runNs: 1000104000, runningPct: 100 });
    // Newer perf does not pad the time; perf 6.1 fills the metric columns for some core events.
    expect(parsePerfStatLine('1.001034567,123,,nvidia_scf_pmu_1/cmem_wr_total_bytes/,1001034567,100.00,,')).toMatchObject({ timeS: 1.001034567, count: 123 });
    expect(parsePerfStatLine('     0.200261824,400.81,msec,cpu-clock,400812874,100.00,2.004,CPUs utilized')).toMatchObject({ count: 400.81, unit: 'msec', event: 'cpu-clock' });
  });

  test('<not counted> and <not supported> are no count; perf\'s own suffix on the event name is kept apart', () => {
    expect(parsePerfStatLine(RECORDED[2]!)).toEqual({ timeS: 1.000104, count: 'not counted', unit: '', event: 'nvidia_scf_pmu_1/cmem_rd_data/', runNs: 0, runningPct: 0 });
    // What perf prints under perf_event_paranoid 2 for a PMU that cannot exclude the kernel (seen from a real perf 6.1 with msr/tsc/).
    const refused = parsePerfStatLine('     0.200248284,<not supported>,,nvidia_scf_pmu_0/cmem_rd_data/u,0,100.00,,');
    expect(refused).toMatchObject({ count: 'not supported', event: 'nvidia_scf_pmu_0/cmem_rd_data/u' });
    expect(eventBase(refused!.event)).toBe('nvidia_scf_pmu_0/cmem_rd_data/');
    expect(eventModifiers(refused!.event)).toBe('u');
    expect(eventModifiers('nvidia_scf_pmu_0/cmem_rd_data/')).toBe('');
  });

  test('anything else is not a line: blanks, comments, perf\'s messages', () => {
    for (const line of ['', '# started on Mon Jan  5 10:00:00 2026', 'Error:', "event syntax error: 'nvidia_scf_pmu_0/cmem_rd_data/'", 'Access to performance monitoring and observability operations is limited.', '1.0,,,x/,1,100.00,,', 'abc,1,,x/,1,100.00,,']) {
      expect(parsePerfStatLine(line)).toBeNull();
    }
  });
});

describe('SCF events and their units', () => {
  test('cmem_rd_data counts 32-byte data beats (memoryN.mem_read), cmem_wr_total_bytes bytes (memoryN.mem_write)', () => {
    expect(SCF_EVENTS.map((e) => [e.name, e.quantity, e.bytesPerCount])).toEqual([
      ['cmem_rd_data', 'mem_read', 32],
      ['cmem_wr_total_bytes', 'mem_write', 1],
    ]);
    // The quantities are memory reads and writes in spec's data-movement vocabulary.
    expect(DATA_MOVEMENT_QUANTITIES.mem_read).toEqual({ link: 'memory', direction: 'read' });
    expect(DATA_MOVEMENT_QUANTITIES.mem_write).toEqual({ link: 'memory', direction: 'write' });
  });

  test('B/s = count × bytes per count / the interval perf measured', () => {
    const [read, write] = SCF_EVENTS as [(typeof SCF_EVENTS)[0], (typeof SCF_EVENTS)[0]];
    expect(bytesPerSecond(2812792500, read, 1.000104)).toBeCloseTo(90e9, 0);
    expect(bytesPerSecond(40004160000, write, 1.000104)).toBeCloseTo(40e9, 0);
    expect(bytesPerSecond(281250000, read, 0.1)).toBeCloseTo(90e9, 0);
  });
});

describe('perf stat loop (lines fed in, no child)', () => {
  const counters: ScfCounter[] = [0, 1].flatMap((socket) =>
    SCF_EVENTS.map((event) => ({ perfEvent: `nvidia_scf_pmu_${socket}/${event.name}/`, socket, event, sensor: `memory${socket}.${event.quantity}` })),
  );
  const neverSpawn = (() => {
    throw new Error('not started');
  }) as unknown as typeof spawnType;
  const loopAt = (clock: { t: number }) => new PerfStatLoop(neverSpawn, { bin: 'perf', intervalMs: 1000, counters, log: createLogger('silent'), now: () => clock.t });

  test('each interval becomes one B/s reading per counted event, stamped when its lines arrived; <not counted> is a gap', () => {
    const clock = { t: 5_000 };
    const loop = loopAt(clock);
    const sink = recordingSink();
    RECORDED.slice(0, 4).forEach((l) => loop.onLine(l));
    clock.t = 6_000;
    RECORDED.slice(4).forEach((l) => loop.onLine(l));
    loop.takePending(sink);
    const rounded = sink.samples.map((s) => ({ ...s, v: Math.round(s.v) }));
    expect(rounded).toEqual([
      // First interval (1.000104 s since perf started): memory1's read count was <not counted>.
      { local: 0, t: 5_000, v: 90e9 },
      { local: 1, t: 5_000, v: 40e9 },
      { local: 3, t: 5_000, v: 25e9 },
      // Second interval, 1 s.
      { local: 0, t: 6_000, v: 90e9 },
      { local: 1, t: 6_000, v: 40e9 },
      { local: 2, t: 6_000, v: 50e9 },
      { local: 3, t: 6_000, v: 25e9 },
    ]);
    expect(loop.stats()).toMatchObject({ lines: 8, intervals: 2, incomplete: 0, notCounted: 1 });
    sink.clear();
    loop.takePending(sink); // each reading once
    expect(sink.samples).toEqual([]);
  });

  test('an interval missing a line closes when the next begins; a restarted perf counts from its own start; a declared unit is refused', () => {
    const clock = { t: 1_000 };
    const loop = loopAt(clock);
    const sink = recordingSink();
    loop.onLine('     0.500000000,1000,,nvidia_scf_pmu_0/cmem_rd_data/,500000000,100.00,,'); // its three other lines never come
    clock.t = 1_600;
    loop.onLine('     1.000000000,2000,,nvidia_scf_pmu_0/cmem_rd_data/,500000000,100.00,,');
    loop.onLine('     1.000000000,5000000000,Bytes,nvidia_scf_pmu_0/cmem_wr_total_bytes/,500000000,100.00,,');
    clock.t = 9_000;
    // perf exited and LineChild started a new one: its clock starts again at 0.
    loop.onLine('     0.250000000,100,,nvidia_scf_pmu_0/cmem_rd_data/,250000000,100.00,,');
    loop.onLine('     0.250000000,100,,nvidia_scf_pmu_0/cmem_wr_total_bytes/u,250000000,100.00,,');
    loop.onLine('     0.250000000,100,,nvidia_scf_pmu_1/cmem_rd_data/,250000000,100.00,,');
    loop.onLine('     0.250000000,100,,nvidia_scf_pmu_1/cmem_wr_total_bytes/,250000000,50.00,,');
    loop.onLine('     0.250000000,7,,some_other_pmu/event/,250000000,100.00,,'); // not one of ours
    loop.takePending(sink);
    expect(sink.samples).toEqual([
      { local: 0, t: 1_000, v: (1000 * 32) / 0.5 },
      { local: 0, t: 1_600, v: (2000 * 32) / 0.5 },
      { local: 0, t: 9_000, v: (100 * 32) / 0.25 },
      { local: 1, t: 9_000, v: 100 / 0.25 },
      { local: 2, t: 9_000, v: (100 * 32) / 0.25 },
      { local: 3, t: 9_000, v: 100 / 0.25 },
    ]);
    expect(loop.stats()).toMatchObject({ intervals: 3, incomplete: 2, unexpectedUnit: 1, timestampResets: 1, multiplexed: 1 });
  });
});

describe('perf source (fixture sysfs, fake perf)', () => {
  test('per socket memoryN.mem_read and memoryN.mem_write (B/s, scope memory, averaging the perf interval), accepted by the API\'s schema', () => {
    const log = path.join(tempDir(), 'perf.log');
    const ctx = contextFor(FIXTURE, fakeWith({ FAKE_PERF_LOG: log }));
    const source = detect(ctx);
    expect(ctx.notes).toEqual([]);
    expect(source?.name).toBe('perf');
    expect(source?.sensors).toEqual(
      ['memory0.mem_read', 'memory0.mem_write', 'memory1.mem_read', 'memory1.mem_write'].map((sensor) => ({ sensor, source: 'perf', unit: 'B/s', scope: 'memory', averagingMs: 100 })),
    );
    for (const s of source!.sensors) expect(SensorDescription.safeParse(s).success).toBe(true);
    expect(source?.details).toMatchObject({
      events: ALL_EVENTS,
      intervalMs: 100,
      perfEventParanoid: 0,
      pmus: [
        { name: 'nvidia_scf_pmu_0', socket: 0, cpumask: '0', associatedCpus: '0-71', identifier: '2cf0036b', events: { cmem_rd_data: 'event=0x1a5', cmem_wr_total_bytes: 'event=0x1db' } },
        { name: 'nvidia_scf_pmu_1', socket: 1, cpumask: '72', associatedCpus: '72-143', identifier: '2cf0036b', events: { cmem_rd_data: 'event=0x1a5', cmem_wr_total_bytes: 'event=0x1db' } },
      ],
    });
    // The probe (one interval), then the long-running counter; both system-wide CSV on stdout.
    expect(fs.readFileSync(log, 'utf8').split('\n')[0]).toBe(`stat -a -x , --log-fd 1 -I 100 -e ${ALL_EVENTS} --interval-count 1`);
  });

  test('the interval is the agent\'s, but never under 100 ms', () => {
    expect(detect(contextFor(FIXTURE, FAKE, { 'interval-ms': 1000 }))?.sensors[0]?.averagingMs).toBe(1000);
    expect(detect(contextFor(FIXTURE, FAKE, { 'interval-ms': 20 }))?.details).toMatchObject({ intervalMs: 100 });
  });

  test('end to end: the fake perf\'s counts arrive as B/s per socket, stamped by the agent\'s clock, each interval once', async () => {
    const log = path.join(tempDir(), 'perf.log');
    const before = Date.now();
    const source = detect(contextFor(FIXTURE, fakeWith({ FAKE_PERF_LOG: log, FAKE_PERF_NOT_COUNTED: 'nvidia_scf_pmu_1/cmem_rd_data/' })));
    const names = source?.sensors.map((s) => s.sensor) ?? [];
    const sink = recordingSink();
    const of = (sensor: string) => sink.samples.filter((s) => names[s.local] === sensor);
    let cycle = 0;
    await waitFor(
      () => {
        source?.read((cycle += 1), sink); // the cycle's time is not the readings' stamp
        return names.every((n) => of(n).length >= 3);
      },
      { timeoutMs: 15_000, intervalMs: 30, what: 'three intervals of the fake perf' },
    );
    const after = Date.now();
    const expected: Record<string, number> = { 'memory0.mem_read': 90e9, 'memory0.mem_write': 40e9, 'memory1.mem_read': 50e9, 'memory1.mem_write': 25e9 };
    for (const n of names) {
      for (const s of of(n)) {
        expect(s.v / expected[n]!).toBeCloseTo(1, 6);
        expect(s.t).toBeGreaterThanOrEqual(before - 50);
        expect(s.t).toBeLessThanOrEqual(after + 50);
      }
      const ts = of(n).map((s) => s.t);
      expect([...ts].sort((a, b) => a - b)).toEqual(ts);
      expect(new Set(ts).size).toBe(ts.length);
    }
    // memory1's reads were <not counted> in the first interval: a gap there, not a 0.
    const first = of('memory0.mem_read')[0]!.t;
    expect(of('memory1.mem_read').map((s) => s.t)).not.toContain(first);
    expect(of('memory1.mem_write').map((s) => s.t)).toContain(first);
    expect(of('memory1.mem_read').every((s) => s.v > 0)).toBe(true);
    const stats = source!.stats!() as { pid: number; notCounted: number; intervals: number };
    expect(stats.pid).toBeGreaterThan(0);
    expect(stats.notCounted).toBe(1);
    await source?.stop();
    started.splice(0);
    expect(fs.readFileSync(log, 'utf8').trim().split('\n')[1]).toBe(`stat -a -x , --log-fd 1 -I 100 -e ${ALL_EVENTS}`);
  });

  test('detected in auto mode after resctrl, as source "perf"', async () => {
    const root = copyFixtures('resctrl', 'grace-pmu');
    const config = configFrom({ 'sysfs-root': root, 'procfs-root': path.join(FIXTURES, 'procfs'), perf: path.join(root, 'perf'), 'interval-ms': 100 });
    const d = detectSources(config, createLogger('silent'), () => {});
    try {
      expect(d.active.map((a) => a.source.name).slice(0, 2)).toEqual(['resctrl', 'perf']);
      expect(d.notes.perf).toBeUndefined();
      expect(d.active[1]!.source.sensors.map((s) => s.sensor)).toEqual(['memory0.mem_read', 'memory0.mem_write', 'memory1.mem_read', 'memory1.mem_write']);
    } finally {
      await Promise.all(d.active.map((a) => a.source.stop()));
    }
  });
});

describe('perf source absent, with the reason', () => {
  test('no SCF PMU: no devices directory, or none of its devices is nvidia_scf_pmu_* (perf is not even asked)', () => {
    const log = path.join(tempDir(), 'perf.log');
    const perf = fakeWith({ FAKE_PERF_LOG: log });
    const empty = tempDir();
    const none = contextFor(empty, perf);
    expect(detect(none)).toBeNull();
    expect(none.notes).toEqual([`${path.join(empty, DEVICES)} does not exist (no perf PMUs in this sysfs)`]);
    const x86 = tempDir();
    fs.mkdirSync(path.join(x86, DEVICES, 'uncore_imc_0'), { recursive: true });
    const other = contextFor(x86, perf);
    expect(detect(other)).toBeNull();
    expect(other.notes).toEqual([`${path.join(x86, DEVICES)}: no nvidia_scf_pmu_* (not a Grace CPU, or the arm_cspmu / nvidia_cspmu driver is not loaded)`]);
    expect(fs.existsSync(log)).toBe(false);
  });

  test('no perf', () => {
    const ctx = contextFor(FIXTURE, '/nonexistent/perf');
    expect(detect(ctx)).toBeNull();
    expect(ctx.notes).toEqual(['/nonexistent/perf not found (the perf tool: linux-tools / perf package)']);
  });

  test('perf_event_paranoid 1 (or Debian\'s and Ubuntu\'s 4): perf refuses, and the note carries its message and the setting', () => {
    for (const paranoid of [1, 4]) {
      const root = copyFixtures('grace-pmu');
      rewrite(path.join(root, 'proc/sys/kernel/perf_event_paranoid'), paranoid);
      const perf = path.join(root, 'perf');
      const ctx = contextFor(root, perf);
      expect(detect(ctx)).toBeNull();
      expect(ctx.notes).toEqual([
        `${perf} stat failed (exit 255): Access to performance monitoring and observability operations is limited. Consider adjusting /proc/sys/kernel/perf_event_paranoid setting to open (perf_event_paranoid is ${paranoid}: counting the whole system needs ≤ 0, or CAP_PERFMON)`,
      ]);
    }
  });

  test('perf_event_paranoid 2: perf falls back to user-space counting, which the SCF PMU refuses (<not supported>)', () => {
    const root = copyFixtures('grace-pmu');
    rewrite(path.join(root, 'proc/sys/kernel/perf_event_paranoid'), 2);
    const ctx = contextFor(root, path.join(root, 'perf'));
    expect(detect(ctx)).toBeNull();
    expect(ctx.notes).toEqual([
      'perf stat: <not supported> for every event, counted as nvidia_scf_pmu_0/cmem_rd_data/u: perf fell back to counting user space only, which the SCF PMU cannot (perf_event_paranoid is 2: counting the whole system needs ≤ 0, or CAP_PERFMON)',
    ]);
  });

  test('perf that fails for another reason: its message (a PMU sysfs lists but perf cannot find)', () => {
    const root = copyFixtures('grace-pmu');
    const perf = fakeWith({ FAKE_PERF_SYSFS: path.join(tempDir(), 'sys') }, path.join(root, 'perf'));
    const ctx = contextFor(root, perf);
    expect(detect(ctx)).toBeNull();
    expect(ctx.notes).toEqual([`${perf} stat failed (exit 129): event syntax error: 'nvidia_scf_pmu_0/cmem_rd_data/' \\___ Cannot find PMU \`nvidia_scf_pmu_0'. Missing kernel support?`]);
  });
});

describe('perf source leaves out what it cannot read, and says so', () => {
  test('an event missing from sysfs, a PMU without a counting CPU, an event perf does not support', () => {
    const root = copyFixtures('grace-pmu');
    const pmu1 = path.join(root, DEVICES, 'nvidia_scf_pmu_1');
    fs.rmSync(path.join(pmu1, 'events/cmem_wr_total_bytes'));
    const missing = contextFor(root, path.join(root, 'perf'));
    expect(detect(missing)?.sensors.map((s) => s.sensor)).toEqual(['memory0.mem_read', 'memory0.mem_write', 'memory1.mem_read']);
    expect(missing.notes).toEqual([`${path.join(pmu1, 'events/cmem_wr_total_bytes')}: missing; left out`]);

    rewrite(path.join(pmu1, 'cpumask'), '');
    const offline = contextFor(root, path.join(root, 'perf'));
    expect(detect(offline)?.sensors.map((s) => s.sensor)).toEqual(['memory0.mem_read', 'memory0.mem_write']);
    expect(offline.notes).toEqual([`${pmu1}/cpumask is empty or unreadable (no online CPU counts for it); left out`]);

    const unsupported = contextFor(root, fakeWith({ FAKE_PERF_NOT_SUPPORTED: 'nvidia_scf_pmu_0/cmem_wr_total_bytes/' }, path.join(root, 'perf')));
    expect(detect(unsupported)?.sensors.map((s) => s.sensor)).toEqual(['memory0.mem_read']);
    expect(unsupported.notes).toContain('perf stat: nvidia_scf_pmu_0/cmem_wr_total_bytes/ <not supported>; left out');
  });

  test('an event whose sysfs declares a scale or unit (perf would print something else than the counts the conversion assumes)', () => {
    const root = copyFixtures('grace-pmu');
    const file = path.join(root, DEVICES, 'nvidia_scf_pmu_0/events/cmem_rd_data');
    fs.writeFileSync(`${file}.scale`, '32\n');
    const ctx = contextFor(root, path.join(root, 'perf'));
    expect(detect(ctx)?.sensors.map((s) => s.sensor)).toEqual(['memory0.mem_write', 'memory1.mem_read', 'memory1.mem_write']);
    expect(ctx.notes).toEqual([`${file}: the kernel declares a scale for it, which this agent does not know; left out`]);
  });
});
