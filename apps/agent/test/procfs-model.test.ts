import fs from 'node:fs';
import path from 'node:path';
import { createLogger } from '../src/log';
import { detectSources } from '../src/sources';
import { detectModel } from '../src/sources/model';
import { detectProcfs } from '../src/sources/procfs';
import type { TelemetryBatch } from '../src/wire';
import { cleanupTempDirs, configFrom, copyFixtures, detectContext, FIXTURES, recordingSink, rewrite, tempDir } from './helpers';

// procfs against the /proc/stat + /proc/meminfo fixture; the power model; which sources autodetection picks.

afterAll(cleanupTempDirs);

const STAT_LINE = (user: number, idle: number) => `cpu  ${user} 0 0 ${idle} 0 0 0 0 0 0\ncpu0 ${user} 0 0 ${idle} 0 0 0 0 0 0`;

describe('procfs source', () => {
  test('cpu0.util from /proc/stat deltas (% of all cores) and node0.mem_used = MemTotal − MemAvailable', () => {
    const root = copyFixtures('procfs');
    const stat = path.join(root, 'stat');
    rewrite(stat, STAT_LINE(1000, 9000));
    const source = detectProcfs(detectContext({ 'procfs-root': root }));
    expect(source?.sensors).toEqual([
      { sensor: 'cpu0.util', source: 'procfs', unit: '%', scope: 'cpu' },
      { sensor: 'node0.mem_used', source: 'procfs', unit: 'B', scope: 'node' },
    ]);
    const sink = recordingSink();
    rewrite(stat, STAT_LINE(1025, 9075)); // 25 busy of 100 jiffies
    source?.read(1, sink);
    rewrite(stat, STAT_LINE(1125, 9075)); // 100 busy of 100
    source?.read(2, sink);
    source?.read(3, sink); // no progress: no util sample
    const memUsed = (24585236 - 21901568) * 1024;
    expect(sink.samples).toEqual([
      { local: 0, t: 1, v: 25 },
      { local: 1, t: 1, v: memUsed },
      { local: 0, t: 2, v: 100 },
      { local: 1, t: 2, v: memUsed },
      { local: 1, t: 3, v: memUsed },
    ]);
    expect(source?.lastUtil()).toBeNaN();
    void source?.stop();
  });

  test('iowait counts as idle; the fixture file parses as a real /proc/stat', () => {
    const root = copyFixtures('procfs');
    const stat = path.join(root, 'stat');
    const source = detectProcfs(detectContext({ 'procfs-root': root }));
    rewrite(stat, fs.readFileSync(path.join(FIXTURES, 'procfs/stat'), 'utf8').replace('46828483 16683', '46828583 16783'));
    const sink = recordingSink();
    source?.read(1, sink);
    expect(sink.samples[0]).toEqual({ local: 0, t: 1, v: 0 });
    void source?.stop();
  });
});

describe('model source', () => {
  test('cpu0.power = idleW + (maxW − idleW) × util/100, labelled as a model', () => {
    let util = 40;
    const source = detectModel(detectContext({ 'model-idle-w': 50, 'model-max-w': 250 }), () => util);
    expect(source?.sensors).toEqual([{ sensor: 'cpu0.power', source: 'model', unit: 'W', scope: 'cpu' }]);
    expect(source?.details).toMatchObject({ method: 'model', idleW: 50, maxW: 250 });
    const sink = recordingSink();
    source?.read(1, sink);
    util = 100;
    source?.read(2, sink);
    util = Number.NaN;
    source?.read(3, sink);
    expect(sink.samples).toEqual([
      { local: 0, t: 1, v: 130 },
      { local: 0, t: 2, v: 250 },
    ]);
  });
});

describe('detectSources', () => {
  const log = createLogger('silent');

  test('with no power sensor (as on this project’s machines) the model is used, and says so', () => {
    const config = configFrom({ 'sysfs-root': tempDir(), 'procfs-root': path.join(FIXTURES, 'procfs') });
    const d = detectSources(config, log, () => {});
    expect(d.active.map((a) => a.source.name)).toEqual(['procfs', 'model']);
    expect(d.store.sensors()).toEqual([
      { sensor: 'cpu0.util', source: 'procfs', unit: '%', scope: 'cpu' },
      { sensor: 'node0.mem_used', source: 'procfs', unit: 'B', scope: 'node' },
      { sensor: 'cpu0.power', source: 'model', unit: 'W', scope: 'cpu' },
    ]);
    expect(d.notes.nvml?.join()).toMatch(/nonexistent/);
    expect(d.notes['nvidia-smi']?.join()).toContain('not found');
    for (const a of d.active) void a.source.stop();
  });

  test('with real power sensors the model is not used; GH200 hwmon + RAPL + procfs give 8 sensors', () => {
    const sysfs = copyFixtures('gh200', 'x86-rapl');
    const d = detectSources(configFrom({ 'sysfs-root': sysfs, 'procfs-root': path.join(FIXTURES, 'procfs') }), log, () => {});
    expect(d.active.map((a) => a.source.name)).toEqual(['hwmon', 'rapl', 'procfs']);
    expect(d.store.sensors().map((s) => s.sensor)).toEqual([
      'module0.power', 'grace0.power', 'cpu0.power', 'sysio0.power', 'cpu0.energy', 'memory0.energy', 'cpu0.util', 'node0.mem_used',
    ]);
    expect(d.notes.model).toEqual(['not used: real power/energy sensors exist']);
    for (const a of d.active) void a.source.stop();
  });

  test('an explicit list picks sources; a name two sources offer is kept from the first (shadowed in meta)', () => {
    const sysfs = copyFixtures('gh200');
    const d = detectSources(configFrom({ 'sysfs-root': sysfs, 'procfs-root': path.join(FIXTURES, 'procfs'), sources: 'hwmon,model' }), log, () => {});
    expect(d.active.map((a) => a.source.name)).toEqual(['hwmon', 'model']);
    expect(d.shadowed).toEqual([{ sensor: 'cpu0.power', source: 'model', keptFrom: 'hwmon' }]);
    // One read cycle, one t for every sensor.
    for (const { source, sink } of d.active) source.read(1234.5, sink);
    const batch = JSON.parse(d.store.takeBatch('n', 0, true) as string) as TelemetryBatch;
    expect(batch.samples.map((c) => [c.sensor, c.t])).toEqual([
      ['module0.power', [1234.5]], ['grace0.power', [1234.5]], ['cpu0.power', [1234.5]], ['sysio0.power', [1234.5]],
    ]);
    expect(batch.samples.find((c) => c.sensor === 'cpu0.power')?.v).toEqual([80.321]);
    for (const a of d.active) void a.source.stop();
  });
});
