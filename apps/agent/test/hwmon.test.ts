import fs from 'node:fs';
import path from 'node:path';
import { detectHwmon } from '../src/sources/hwmon';
import { cleanupTempDirs, copyFixtures, detectContext, FIXTURES, recordingSink, rewrite, tempDir } from './helpers';

// Against the GH200 hwmon fixtures, one per kernel layout (files laid out like a real node's sysfs):
// test/fixtures/gh200 as acpi_power_meter registers with hwmon_device_register (every attribute,
// `name` too, on the ACPI device: hwmonN/device/), test/fixtures/gh200-hwmon-info as a driver
// registered with hwmon_device_register_with_info lays them out (on hwmonN itself). Their READMEs say which is which.

afterAll(cleanupTempDirs);

describe('hwmon source (GH200 fixture)', () => {
  test('both kernel layouts give the same meters: attributes under hwmonN/device/ (legacy) or on hwmonN/ (hwmon info API)', () => {
    const meters = (fixture: string) => {
      const source = detectHwmon(detectContext({ 'sysfs-root': path.join(FIXTURES, fixture) }));
      const sink = recordingSink();
      source?.read(1000, sink);
      void source?.stop();
      return { sensors: source?.sensors, values: sink.samples.map((s) => s.v), paths: (source?.details.meters as { path: string }[]).map((m) => path.relative(path.join(FIXTURES, fixture), m.path)) };
    };
    const legacy = meters('gh200');
    const info = meters('gh200-hwmon-info');
    expect(info.sensors).toEqual(legacy.sensors);
    expect(info.values).toEqual([351.234, 121.456, 80.321, 24.987]);
    expect(info.values).toEqual(legacy.values);
    expect(legacy.paths[0]).toBe('sys/class/hwmon/hwmon1/device/power1_average');
    expect(info.paths[0]).toBe('sys/class/hwmon/hwmon1/power1_average');
  });

  test('finds the four socket-0 meters by their power1_oem_info labels, each declaring its power1_average_interval, and reads µW as W', () => {
    const ctx = detectContext({ 'sysfs-root': path.join(FIXTURES, 'gh200') });
    const source = detectHwmon(ctx);
    expect(source).not.toBeNull();
    expect(source?.sensors).toEqual([
      // The firmware averages each reading over power1_average_interval (50 ms in the fixture) ending at it.
      { sensor: 'module0.power', source: 'hwmon', unit: 'W', scope: 'module', averagingMs: 50 },
      { sensor: 'grace0.power', source: 'hwmon', unit: 'W', scope: 'grace', averagingMs: 50 },
      { sensor: 'cpu0.power', source: 'hwmon', unit: 'W', scope: 'cpu', averagingMs: 50 },
      { sensor: 'sysio0.power', source: 'hwmon', unit: 'W', scope: 'sysio', averagingMs: 50 },
    ]);
    const sink = recordingSink();
    source?.read(1000, sink);
    expect(sink.samples).toEqual([
      { local: 0, t: 1000, v: 351.234 },
      { local: 1, t: 1000, v: 121.456 },
      { local: 2, t: 1000, v: 80.321 },
      { local: 3, t: 1000, v: 24.987 },
    ]);
    expect(source?.details).toMatchObject({
      meters: [
        { sensor: 'module0.power', label: 'Module Power Socket 0', averageIntervalMs: 50, path: expect.stringMatching(/hwmon1\/device\/power1_average$/) },
        { sensor: 'grace0.power', label: 'Grace Power Socket 0' },
        { sensor: 'cpu0.power', label: 'CPU Power Socket 0' },
        { sensor: 'sysio0.power', label: 'SysIO Power Socket 0' },
      ],
    });
    void source?.stop();
  });

  test('counts cached repeats: the same value read again before the averaging interval elapsed (still recorded)', () => {
    const root = copyFixtures('gh200');
    const dev = path.join(root, 'sys/class/hwmon/hwmon1/device');
    rewrite(path.join(dev, 'power1_average_interval'), 1000);
    const source = detectHwmon(detectContext({ 'sysfs-root': root, sources: 'hwmon' }));
    const sink = recordingSink();
    source?.read(0, sink); // module 351.234 W, first value
    source?.read(100, sink); // same value 100 ms later: cached (interval 1000 ms)
    source?.read(200, sink); // cached again
    rewrite(path.join(dev, 'power1_average'), 360000000);
    source?.read(1000, sink); // new value
    source?.read(2100, sink); // same value, but 1100 ms later: a real (unchanged) reading
    const module0 = sink.samples.filter((s) => s.local === 0).map((s) => s.v);
    expect(module0).toEqual([351.234, 351.234, 351.234, 360, 360]);
    const stats = source?.stats?.() as { cachedRepeats: number; perSensor: Record<string, { cachedRepeats: number }> };
    expect(stats.perSensor['module0.power']?.cachedRepeats).toBe(2);
    // The other meters (interval 50 ms) read the same value 100 ms apart: not cached repeats.
    expect(stats.perSensor['grace0.power']?.cachedRepeats).toBe(0);
    expect(stats.cachedRepeats).toBe(2);
    void source?.stop();
  });

  test('skips hwmon devices that are not labelled power meters, and one that cannot be read', () => {
    const root = copyFixtures('gh200');
    const hw = path.join(root, 'sys/class/hwmon');
    rewrite(path.join(hw, 'hwmon4/device/power1_oem_info'), 'Mystery Power Rail 7');
    fs.rmSync(path.join(hw, 'hwmon3/device/power1_average_interval'));
    const ctx = detectContext({ 'sysfs-root': root });
    const source = detectHwmon(ctx);
    expect(source?.sensors.map((s) => s.sensor)).toEqual(['module0.power', 'grace0.power', 'cpu0.power']);
    expect(source?.details.ignored).toEqual([{ hwmon: 'hwmon4', label: 'Mystery Power Rail 7' }]);
    expect((source?.details.meters as { averageIntervalMs: number | null }[])[2]?.averageIntervalMs).toBeNull();
    void source?.stop();
  });

  test('each meter declares the interval its firmware is set to; one without the file, or with a value the API refuses, declares none', () => {
    const root = copyFixtures('gh200');
    const hw = path.join(root, 'sys/class/hwmon');
    rewrite(path.join(hw, 'hwmon1/device/power1_average_interval'), 1000); // set to 1 s on this node
    fs.rmSync(path.join(hw, 'hwmon2/device/power1_average_interval'));
    rewrite(path.join(hw, 'hwmon3/device/power1_average_interval'), 0);
    const source = detectHwmon(detectContext({ 'sysfs-root': root }));
    expect(source?.sensors.map((s) => [s.sensor, s.averagingMs])).toEqual([
      ['module0.power', 1000],
      ['grace0.power', undefined],
      ['cpu0.power', undefined],
      ['sysio0.power', 50],
    ]);
    expect(source?.sensors[1]).not.toHaveProperty('averagingMs');
    void source?.stop();
  });

  test('is absent without hwmon, or with no labelled meter', () => {
    const empty = tempDir();
    const ctx = detectContext({ 'sysfs-root': empty });
    expect(detectHwmon(ctx)).toBeNull();
    expect(ctx.notes.join()).toContain('does not exist');
    const onlyNvme = tempDir();
    fs.cpSync(path.join(FIXTURES, 'gh200/sys/class/hwmon/hwmon0'), path.join(onlyNvme, 'sys/class/hwmon/hwmon0'), { recursive: true });
    expect(detectHwmon(detectContext({ 'sysfs-root': onlyNvme }))).toBeNull();
  });

  test('a meter that fails mid-run skips that sample only', () => {
    const root = copyFixtures('gh200');
    const source = detectHwmon(detectContext({ 'sysfs-root': root }));
    rewrite(path.join(root, 'sys/class/hwmon/hwmon2/device/power1_average'), 'garbage');
    const sink = recordingSink();
    source?.read(5, sink);
    expect(sink.samples.map((s) => s.local)).toEqual([0, 2, 3]);
    expect((source?.stats?.() as { readErrors: number }).readErrors).toBe(1);
    void source?.stop();
  });
});
