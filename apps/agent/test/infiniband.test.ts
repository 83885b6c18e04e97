import fs from 'node:fs';
import path from 'node:path';
import { detectInfiniband } from '../src/sources/infiniband';
import { cleanupTempDirs, copyFixtures, detectContext, recordingSink, rewrite } from './helpers';

// RDMA ports' traffic counters, against the FIXTURES test/fixtures/infiniband and
// infiniband-legacy (files laid out like /sys/class/infiniband: drivers/infiniband/core/sysfs.c's
// counters group, an older kernel's counters_ext, EFA's hw_counters; no RDMA device where the tests run).

afterAll(cleanupTempDirs);

const IB = 'sys/class/infiniband';
const WORDS_32 = 0xffffffff;

describe('infiniband source (fixture)', () => {
  test('one ibN.ib_tx/ib_rx pair per port, in name order; the data counters count 4-byte words, the hw_counters bytes', () => {
    const root = copyFixtures('infiniband');
    const ctx = detectContext({ 'sysfs-root': root });
    const source = detectInfiniband(ctx)!;
    expect(source.sensors.map((s) => s.sensor)).toEqual(['ib0.ib_tx', 'ib0.ib_rx', 'ib1.ib_tx', 'ib1.ib_rx', 'ib2.ib_tx', 'ib2.ib_rx']);
    expect(source.sensors[0]).toEqual({ sensor: 'ib0.ib_tx', source: 'infiniband', unit: 'B/s', scope: 'ib' });
    expect(source.details.ports).toEqual([
      { ib: 'ib0', device: 'efa_0', port: 1, counters: 'hw_counters', linkLayer: 'Unspecified', state: '4: ACTIVE', rate: '100 Gb/sec (4X EDR)' },
      { ib: 'ib1', device: 'mlx5_0', port: 1, counters: 'counters (64-bit)', linkLayer: 'InfiniBand', state: '4: ACTIVE', rate: '200 Gb/sec (4X HDR)' },
      { ib: 'ib2', device: 'mlx5_1', port: 1, counters: 'counters (32-bit or unknown width)', linkLayer: 'InfiniBand', state: '4: ACTIVE', rate: '100 Gb/sec (4X EDR)' },
    ]);
    const sink = recordingSink();
    source.read(10_000, sink); // the first cycle only takes the counters as they are
    expect(sink.samples).toEqual([]);
    // Two seconds later: efa_0 sent 2 GB (bytes); mlx5_0 sent 1e9 words (4 GB) and received 5e8 words (2 GB).
    const add = (file: string, delta: number) => rewrite(path.join(root, IB, file), Number(fs.readFileSync(path.join(root, IB, file), 'utf8')) + delta);
    add('efa_0/ports/1/hw_counters/tx_bytes', 2e9);
    add('mlx5_0/ports/1/counters/port_xmit_data', 1e9);
    add('mlx5_0/ports/1/counters/port_rcv_data', 5e8);
    add('mlx5_1/ports/1/counters/port_xmit_data', 250);
    source.read(12_000, sink);
    expect(sink.samples).toEqual([
      { local: 0, t: 12_000, v: 1e9 },
      { local: 1, t: 12_000, v: 0 },
      { local: 2, t: 12_000, v: 2e9 },
      { local: 3, t: 12_000, v: 1e9 },
      { local: 4, t: 12_000, v: 500 },
      { local: 5, t: 12_000, v: 0 },
    ]);
    void source.stop();
  });

  test('a 32-bit counter that reaches 2³² − 1 words is dropped as saturated, and the interval that reached it is not reported', () => {
    const root = copyFixtures('infiniband');
    const source = detectInfiniband(detectContext({ 'sysfs-root': root }))!;
    const sink = recordingSink();
    const tx = path.join(root, IB, 'mlx5_1/ports/1/counters/port_xmit_data');
    source.read(0, sink);
    rewrite(tx, WORDS_32);
    source.read(1000, sink);
    source.read(2000, sink);
    expect(sink.samples.filter((s) => s.local === 4)).toEqual([]);
    expect(sink.dropped).toEqual([{ local: 4, reason: expect.stringContaining('saturated at 2³² − 1 words') }]);
    expect(source.stats!()).toMatchObject({ saturated: 1 });
    // The port's rx counter goes on.
    expect(sink.samples.filter((s) => s.local === 5).map((s) => s.t)).toEqual([1000, 2000]);
  });

  test('a counter of unknown width that passes 2³² − 1 is 64 bits wide: never taken for saturated', () => {
    const root = copyFixtures('infiniband');
    const source = detectInfiniband(detectContext({ 'sysfs-root': root }))!;
    const sink = recordingSink();
    const tx = path.join(root, IB, 'mlx5_1/ports/1/counters/port_xmit_data');
    source.read(0, sink);
    rewrite(tx, WORDS_32 + 1000); // PortCountersExtended under the 32-bit group's names (pma_group_noietf)
    source.read(1000, sink);
    rewrite(tx, WORDS_32 + 1000 + WORDS_32 - 1000); // passing through 2³² − 1 × 2 − … is just traffic now
    source.read(2000, sink);
    expect(sink.dropped).toEqual([]);
    expect(sink.samples.filter((s) => s.local === 4)).toEqual([
      { local: 4, t: 1000, v: (WORDS_32 + 1000 - 4e9) * 4 },
      { local: 4, t: 2000, v: (WORDS_32 - 1000) * 4 },
    ]);
  });

  test('a 32-bit counter saturated already at start is left out with a note; the 64-bit counters_ext of an older kernel are read instead of its saturated counters/', () => {
    const root = copyFixtures('infiniband');
    rewrite(path.join(root, IB, 'mlx5_1/ports/1/counters/port_rcv_data'), WORDS_32);
    const ctx = detectContext({ 'sysfs-root': root });
    const source = detectInfiniband(ctx)!;
    expect(source.sensors.map((s) => s.sensor)).toEqual(['ib0.ib_tx', 'ib0.ib_rx', 'ib1.ib_tx', 'ib1.ib_rx', 'ib2.ib_tx']);
    expect(ctx.notes).toEqual([expect.stringMatching(/mlx5_1\/ports\/1\/counters\/port_rcv_data: saturated \(4294967295 = 2³² − 1 words.*left out/)]);

    const legacy = copyFixtures('infiniband-legacy');
    const old = detectInfiniband(detectContext({ 'sysfs-root': legacy }))!;
    expect(old.details.ports).toEqual([
      expect.objectContaining({ ib: 'ib0', device: 'mlx4_0', port: 1, counters: 'counters_ext' }),
      expect.objectContaining({ ib: 'ib1', device: 'mlx4_0', port: 2, counters: 'counters_ext' }),
    ]);
    const sink = recordingSink();
    old.read(0, sink);
    rewrite(path.join(legacy, IB, 'mlx4_0/ports/2/counters_ext/port_xmit_data_64'), 2 * 81234567890 + 25e7);
    old.read(1000, sink);
    expect(sink.samples.find((s) => s.local === 2)).toEqual({ local: 2, t: 1000, v: 1e9 });
  });

  test('unreadable counters: a port without a PMA, a file it may not read, a counter that goes back (reset) — gaps and notes, never a figure', () => {
    const root = copyFixtures('infiniband');
    // efa_0 loses its hw_counters, and mlx5_0's PMA answers nothing (older kernels print this).
    fs.rmSync(path.join(root, IB, 'efa_0/ports/1/hw_counters'), { recursive: true });
    rewrite(path.join(root, IB, 'mlx5_0/ports/1/counters/port_xmit_data'), 'N/A (no PMA)');
    const ctx = detectContext({ 'sysfs-root': root });
    const source = detectInfiniband(ctx)!;
    expect(source.sensors.map((s) => s.sensor)).toEqual(['ib2.ib_tx', 'ib2.ib_rx']);
    expect(ctx.notes).toEqual([
      expect.stringMatching(/^efa_0 port 1: no readable data counters \(counters\/port_xmit_data: ENOENT/),
      expect.stringMatching(/^mlx5_0 port 1: no readable data counters \(counters\/port_xmit_data: "N\/A \(no PMA\)"/),
    ]);
    const sink = recordingSink();
    const rx = path.join(root, IB, 'mlx5_1/ports/1/counters/port_rcv_data');
    source.read(0, sink);
    rewrite(rx, 100); // reset (perfquery -R): that interval is unknown
    source.read(1000, sink);
    rewrite(rx, 350);
    source.read(2000, sink);
    expect(sink.samples.filter((s) => s.local === 1)).toEqual([{ local: 1, t: 2000, v: 1000 }]);
    void source.stop();
    // A counter file the agent may not read (EACCES on a node; the tests run as root, whom chmod
    // does not stop, so a directory in its place makes the read fail the same way): left out, and said so.
    fs.rmSync(rx);
    fs.mkdirSync(rx);
    const ctx2 = detectContext({ 'sysfs-root': root });
    expect(detectInfiniband(ctx2)).toBeNull();
    expect(ctx2.notes[2]).toMatch(/^mlx5_1 port 1: no readable data counters \(counters\/port_rcv_data: EISDIR/);
  });

  test('no /sys/class/infiniband: no source, and why', () => {
    const ctx = detectContext({ 'sysfs-root': copyFixtures('net') });
    expect(detectInfiniband(ctx)).toBeNull();
    expect(ctx.notes).toEqual([expect.stringContaining('does not exist (no RDMA device)')]);
  });
});
