import path from 'node:path';
import { detectRapl } from '../src/sources/rapl';
import { cleanupTempDirs, copyFixtures, detectContext, FIXTURES, recordingSink, rewrite, tempDir } from './helpers';

// Against the x86 RAPL fixture (test/fixtures/x86-rapl: files laid out like /sys/class/powercap).

afterAll(cleanupTempDirs);

describe('rapl source (x86 fixture)', () => {
  test('package-0 → cpu0.energy and its dram subzone → memory0.energy, µJ as J, wrapAt from max_energy_range_uj', () => {
    const source = detectRapl(detectContext({ 'sysfs-root': path.join(FIXTURES, 'x86-rapl') }));
    expect(source?.sensors).toEqual([
      { sensor: 'cpu0.energy', source: 'rapl', unit: 'J', scope: 'cpu', wrapAt: 262143.32885 },
      { sensor: 'memory0.energy', source: 'rapl', unit: 'J', scope: 'memory', wrapAt: 65712.999613 },
    ]);
    const sink = recordingSink();
    source?.read(42, sink);
    expect(sink.samples).toEqual([
      { local: 0, t: 42, v: 123456.789012 },
      { local: 1, t: 42, v: 9876.54321 },
    ]);
    expect(source?.details).toMatchObject({
      zones: [
        { zone: 'intel-rapl:0', name: 'package-0', sensor: 'cpu0.energy', maxEnergyRangeUj: 262143328850 },
        { zone: 'intel-rapl:0:0', name: 'dram', sensor: 'memory0.energy', maxEnergyRangeUj: 65712999613 },
      ],
    });
    void source?.stop();
  });

  test('records the raw counter across a wrap (the server unwraps it with wrapAt)', () => {
    const root = copyFixtures('x86-rapl');
    const energy = path.join(root, 'sys/class/powercap/intel-rapl:0/energy_uj');
    const source = detectRapl(detectContext({ 'sysfs-root': root, sources: 'rapl' }));
    const sink = recordingSink();
    for (const [t, uj] of [[0, 262000000000], [100, 262143000000], [200, 1500000], [300, 90000000]] as const) {
      rewrite(energy, uj);
      source?.read(t, sink);
    }
    expect(sink.samples.filter((s) => s.local === 0).map((s) => s.v)).toEqual([262000, 262143, 1.5, 90]);
    void source?.stop();
  });

  test('finds a subzone that only sits inside its parent zone directory', () => {
    const root = tempDir();
    const fixture = path.join(FIXTURES, 'x86-rapl/sys/class/powercap');
    const cap = path.join(root, 'sys/class/powercap');
    // Layout of /sys/devices/virtual/powercap/intel-rapl: the subzone nested in its package zone.
    require('node:fs').cpSync(path.join(fixture, 'intel-rapl:0'), path.join(cap, 'intel-rapl:0'), { recursive: true });
    require('node:fs').cpSync(path.join(fixture, 'intel-rapl:0:0'), path.join(cap, 'intel-rapl:0/intel-rapl:0:0'), { recursive: true });
    const source = detectRapl(detectContext({ 'sysfs-root': root }));
    expect(source?.sensors.map((s) => s.sensor)).toEqual(['cpu0.energy', 'memory0.energy']);
    void source?.stop();
  });

  test('ignores zones other than package and dram, and is absent without powercap', () => {
    const root = copyFixtures('x86-rapl');
    rewrite(path.join(root, 'sys/class/powercap/intel-rapl:0:0/name'), 'core');
    const ctx = detectContext({ 'sysfs-root': root });
    const source = detectRapl(ctx);
    expect(source?.sensors.map((s) => s.sensor)).toEqual(['cpu0.energy']);
    expect(ctx.notes.join()).toContain('intel-rapl:0:0 (core): only package and dram zones are recorded');
    void source?.stop();
    expect(detectRapl(detectContext({ 'sysfs-root': tempDir() }))).toBeNull();
  });
});
