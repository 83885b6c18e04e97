import path from 'node:path';
import { detectResctrl } from '../src/sources/resctrl';
import { cleanupTempDirs, copyFixtures, detectContext, FIXTURES, recordingSink, rewrite, tempDir } from './helpers';

// Host memory traffic from resctrl's memory bandwidth monitoring, against the FIXTURE
// test/fixtures/resctrl (files laid out like /sys/fs/resctrl; no RDT/PQoS where the tests run).

afterAll(cleanupTempDirs);

const R = 'sys/fs/resctrl';

describe('resctrl source (fixture)', () => {
  test('one memoryNN.mem_traffic per L3 domain (B/s, scope memory): the counters\' increase per second, the root and every top-level group together', () => {
    const root = copyFixtures('resctrl');
    const ctx = detectContext({ 'sysfs-root': root });
    const source = detectResctrl(ctx);
    expect(source?.sensors).toEqual([
      { sensor: 'memory0.mem_traffic', source: 'resctrl', unit: 'B/s', scope: 'memory' },
      { sensor: 'memory1.mem_traffic', source: 'resctrl', unit: 'B/s', scope: 'memory' },
    ]);
    expect(source?.details).toMatchObject({ groups: ['/', 'batch'], domains: [{ id: 0, files: 2 }, { id: 1, files: 1 }] });
    // The batch group's domain-1 counter reads Unavailable: left out, and said so.
    expect(ctx.notes).toEqual([`${path.join(root, R, 'batch/mon_data/mon_L3_01/mbm_total_bytes')}: Unavailable; left out`]);
    const sink = recordingSink();
    source?.read(10_000, sink); // the first cycle only takes the counters as they are
    expect(sink.samples).toEqual([]);
    // One second later: domain 0 moved 3 GB (root) + 1 GB (batch), domain 1 2 GB.
    rewrite(path.join(root, R, 'mon_data/mon_L3_00/mbm_total_bytes'), 981234567890 + 3e9);
    rewrite(path.join(root, R, 'batch/mon_data/mon_L3_00/mbm_total_bytes'), 12345678901 + 1e9);
    rewrite(path.join(root, R, 'mon_data/mon_L3_01/mbm_total_bytes'), 876543210987 + 2e9);
    source?.read(11_000, sink);
    expect(sink.samples).toEqual([
      { local: 0, t: 11_000, v: 4e9 },
      { local: 1, t: 11_000, v: 2e9 },
    ]);
    // Half a second later, 1 GB more in domain 0's root counter: 2 GB/s.
    sink.clear();
    rewrite(path.join(root, R, 'mon_data/mon_L3_00/mbm_total_bytes'), 981234567890 + 4e9);
    source?.read(11_500, sink);
    expect(sink.samples).toEqual([
      { local: 0, t: 11_500, v: 2e9 },
      { local: 1, t: 11_500, v: 0 },
    ]);
    void source?.stop();
  });

  test('a counter that reads Unavailable or goes backwards makes that cycle a gap for its domain, not less traffic', () => {
    const root = copyFixtures('resctrl');
    const source = detectResctrl(detectContext({ 'sysfs-root': root }));
    const sink = recordingSink();
    const file = path.join(root, R, 'batch/mon_data/mon_L3_00/mbm_total_bytes');
    source?.read(0, sink);
    rewrite(file, 'Unavailable');
    source?.read(1000, sink);
    expect(sink.samples.filter((s) => s.local === 0)).toEqual([]);
    rewrite(file, 5);
    source?.read(2000, sink); // the previous value was not a number: still no increase known
    rewrite(file, 1005);
    source?.read(3000, sink);
    expect(sink.samples.filter((s) => s.local === 0)).toEqual([{ local: 0, t: 3000, v: 1000 }]);
    // The group was re-created: its counter starts again lower. No reading for that cycle, then on.
    rewrite(file, 500);
    source?.read(4000, sink);
    rewrite(file, 2500);
    source?.read(5000, sink);
    expect(sink.samples.filter((s) => s.local === 0).map((s) => s.t)).toEqual([3000, 5000]);
    expect(sink.samples.find((s) => s.local === 0 && s.t === 5000)?.v).toBe(2000);
    void source?.stop();
  });

  test('absent, with the reason, where resctrl is not mounted or monitors no memory bandwidth', () => {
    const none = detectContext({ 'sysfs-root': tempDir() });
    expect(detectResctrl(none)).toBeNull();
    expect(none.notes.join()).toContain('mon_features does not exist');
    const root = copyFixtures('resctrl');
    rewrite(path.join(root, R, 'info/L3_MON/mon_features'), 'llc_occupancy');
    const cacheOnly = detectContext({ 'sysfs-root': root });
    expect(detectResctrl(cacheOnly)).toBeNull();
    expect(cacheOnly.notes.join()).toContain('monitoring lists no mbm_total_bytes (llc_occupancy)');
    expect(detectResctrl(detectContext({ 'sysfs-root': path.join(FIXTURES, 'gh200') }))).toBeNull();
  });
});
