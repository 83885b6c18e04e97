import fs from 'node:fs';
import path from 'node:path';
import { chooseInterfaces, detectNet, parseProcNetDev } from '../src/sources/net';
import { configFrom, cleanupTempDirs, copyFixtures, detectContext, FIXTURES, recordingSink, rewrite } from './helpers';

// Network interfaces' traffic, against the FIXTURES test/fixtures/net (a node's /sys/class/net
// with Ethernet, Slingshot, a Docker bridge and a veth, and its /proc/net/dev) and netns (the
// /proc/net/dev of a process in a namespace of its own). The real /sys/class/net is read by
// net-traffic.int.test.ts.

afterAll(cleanupTempDirs);

const NET = 'sys/class/net';

describe('net source (fixture)', () => {
  test('auto: the physical interfaces (eth0, hsn0), not lo, nor the bridge and veth whose traffic they also carry; bytes per second from tx_bytes/rx_bytes', () => {
    const root = copyFixtures('net');
    const ctx = detectContext({ 'sysfs-root': root, 'procfs-root': path.join(root, 'proc') });
    const source = detectNet(ctx)!;
    expect(source.sensors).toEqual([
      { sensor: 'nic0.net_tx', source: 'net', unit: 'B/s', scope: 'nic' },
      { sensor: 'nic0.net_rx', source: 'net', unit: 'B/s', scope: 'nic' },
      { sensor: 'nic1.net_tx', source: 'net', unit: 'B/s', scope: 'nic' },
      { sensor: 'nic1.net_rx', source: 'net', unit: 'B/s', scope: 'nic' },
    ]);
    expect(source.details).toEqual({
      counters: `${path.join(root, NET)}/<if>/statistics/{tx,rx}_bytes`,
      choice: 'auto',
      interfaces: [
        { nic: 'nic0', name: 'eth0', kind: 'physical' },
        { nic: 'nic1', name: 'hsn0', kind: 'physical' },
      ],
    });
    expect(ctx.notes).toEqual([
      'lo left out (loopback: its traffic never leaves the node)',
      'virtual interfaces left out (their traffic also crosses a physical one, which counts it): docker0, veth1a2b3c; --net-interfaces chooses others',
    ]);
    const sink = recordingSink();
    source.read(5000, sink);
    expect(sink.samples).toEqual([]);
    // Half a second: hsn0 sends 5 GB and receives 1 GB; eth0 sends 1000 bytes.
    rewrite(path.join(root, NET, 'hsn0/statistics/tx_bytes'), 918273645546 + 5e9);
    rewrite(path.join(root, NET, 'hsn0/statistics/rx_bytes'), 817263544536 + 1e9);
    rewrite(path.join(root, NET, 'eth0/statistics/tx_bytes'), 7236551 + 1000);
    source.read(5500, sink);
    expect(sink.samples).toEqual([
      { local: 0, t: 5500, v: 2000 },
      { local: 1, t: 5500, v: 0 },
      { local: 2, t: 5500, v: 10e9 },
      { local: 3, t: 5500, v: 2e9 },
    ]);
    // An interface re-created (its counters start again from 0): that interval is a gap, not negative traffic.
    sink.clear();
    rewrite(path.join(root, NET, 'eth0/statistics/tx_bytes'), 10);
    source.read(6000, sink);
    rewrite(path.join(root, NET, 'eth0/statistics/tx_bytes'), 510);
    source.read(7000, sink);
    expect(sink.samples.filter((s) => s.local === 0)).toEqual([{ local: 0, t: 7000, v: 500 }]);
    void source.stop();
  });

  test('--net-interfaces: names and prefixes, whatever their kind; a name not present is said so', () => {
    const root = copyFixtures('net');
    const ctx = detectContext({ 'sysfs-root': root, 'procfs-root': path.join(root, 'proc'), 'net-interfaces': 'hsn*,lo,ib0' });
    const source = detectNet(ctx)!;
    expect(source.details.interfaces).toEqual([
      { nic: 'nic0', name: 'hsn0', kind: 'physical' },
      { nic: 'nic1', name: 'lo', kind: 'virtual' },
    ]);
    expect(ctx.notes).toEqual(['--net-interfaces ib0: no such interface (present: docker0, eth0, hsn0, lo, veth1a2b3c)']);
    expect(() => configFrom({ 'net-interfaces': 'eth0,bad/name' })).toThrow(/--net-interfaces: expected "auto" or a comma-separated list of interface names/);
    expect(() => configFrom({ 'net-interfaces': 'eth0;rm -rf' })).toThrow(/--net-interfaces/);
  });

  test('only virtual interfaces (a network namespace with a veth): those, without lo', () => {
    const notes: string[] = [];
    expect(chooseInterfaces(['lo', 'veth-gh-001'], () => false, 'auto', (m) => notes.push(m))).toEqual(['veth-gh-001']);
    expect(chooseInterfaces(['lo'], () => false, 'auto', (m) => notes.push(m))).toEqual([]);
    expect(notes).toContain('no network interface but the loopback');
  });

  test("a /sys mounted in another network namespace than the agent's: counters from /proc/net/dev, the agent's own", () => {
    const root = copyFixtures('net');
    const ctx = detectContext({ 'sysfs-root': root, 'procfs-root': path.join(FIXTURES, 'netns/proc') });
    const source = detectNet(ctx)!;
    expect(ctx.notes[0]).toMatch(/lists docker0, eth0, hsn0, lo, veth1a2b3c but .*netns\/proc\/net\/dev lists lo, veth-gh-001: \/sys was mounted in another network namespace/);
    expect(source.details).toMatchObject({ interfaces: [{ nic: 'nic0', name: 'veth-gh-001', kind: 'unknown' }] });
    // The counters move in a copy of that /proc/net/dev.
    const proc = copyFixtures('netns');
    const moving = detectNet(detectContext({ 'sysfs-root': root, 'procfs-root': path.join(proc, 'proc') }))!;
    const sink = recordingSink();
    moving.read(0, sink);
    const file = path.join(proc, 'proc/net/dev');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('2000000', '2500000').replace('3000000', '4000000'));
    moving.read(1000, sink);
    expect(sink.samples).toEqual([
      { local: 0, t: 1000, v: 1e6 },
      { local: 1, t: 1000, v: 5e5 },
    ]);
  });

  test('/proc/net/dev: names right-aligned or longer than the column, rx bytes first and tx bytes ninth', () => {
    const parsed = parseProcNetDev(fs.readFileSync(path.join(FIXTURES, 'net/proc/net/dev'), 'utf8'));
    expect([...parsed.keys()]).toEqual(['lo', 'eth0', 'hsn0', 'docker0', 'veth1a2b3c']);
    expect(parsed.get('hsn0')).toEqual([817263544536, 918273645546]);
  });

  test('a sysfs root without class/net (a fixture tree for the other sources): /proc/net/dev, and every interface but lo', () => {
    const ctx = detectContext({ 'sysfs-root': copyFixtures('infiniband'), 'procfs-root': path.join(FIXTURES, 'net/proc') });
    const source = detectNet(ctx)!;
    expect(ctx.notes[0]).toMatch(/sys\/class\/net cannot be read; counters read from .*net\/proc\/net\/dev \(every interface's kind unknown\)$/);
    expect((source.details.interfaces as { name: string }[]).map((i) => i.name)).toEqual(['docker0', 'eth0', 'hsn0', 'veth1a2b3c']);
  });

  test('neither /sys/class/net nor /proc/net/dev: no source, and why', () => {
    const root = copyFixtures('infiniband');
    const ctx = detectContext({ 'sysfs-root': root, 'procfs-root': root });
    expect(detectNet(ctx)).toBeNull();
    expect(ctx.notes).toEqual([expect.stringMatching(/^neither .* nor .* can be read$/)]);
  });
});
