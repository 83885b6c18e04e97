import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { detectNet } from '../src/sources/net';
import { detectContext, recordingSink } from './helpers';

// The net source against this machine's real /sys/class/net (no fixture): bytes sent over the
// loopback between two sockets of this process show in lo's counters, and the default choice
// leaves lo (and any virtual interface, where a physical one exists) out.

const MB = 1e6;

/** Sends `bytes` from one socket to another over 127.0.0.1 and resolves once all arrived. */
async function loopbackTransfer(bytes: number): Promise<void> {
  let received = 0;
  let done!: () => void;
  const arrived = new Promise<void>((resolve) => (done = resolve));
  const server = net.createServer((socket) => {
    socket.on('data', (chunk) => {
      received += chunk.length;
      if (received >= bytes) done();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const client = net.connect(port, '127.0.0.1');
  const chunk = Buffer.alloc(1 << 20, 7);
  for (let sent = 0; sent < bytes; sent += chunk.length) {
    if (!client.write(chunk)) await new Promise((resolve) => client.once('drain', resolve));
  }
  await arrived;
  client.destroy();
  await new Promise((resolve) => server.close(resolve));
}

describe('net source on this machine (real /sys/class/net)', () => {
  test('64 MB sent over the loopback: lo reads at least that much sent and received, as B/s over the cycle', async () => {
    const source = detectNet(detectContext({ 'sysfs-root': '/', 'procfs-root': '/proc', 'net-interfaces': 'lo' }))!;
    expect(source.details).toMatchObject({ counters: '/sys/class/net/<if>/statistics/{tx,rx}_bytes', interfaces: [{ nic: 'nic0', name: 'lo', kind: 'virtual' }] });
    const sink = recordingSink();
    const t0 = Date.now();
    source.read(t0, sink);
    await loopbackTransfer(64 * MB);
    const t1 = Date.now() + 1; // a cycle at least 1 ms later
    source.read(t1, sink);
    const bytes = (local: number) => sink.samples.filter((s) => s.local === local).reduce((b, s) => b + (s.v * (t1 - t0)) / 1000, 0);
    expect(bytes(0)).toBeGreaterThanOrEqual(64 * MB);
    expect(bytes(1)).toBeGreaterThanOrEqual(64 * MB);
    void source.stop();
  });

  test('auto: never lo; only interfaces backed by a device where this machine has any', () => {
    const ctx = detectContext({ 'sysfs-root': '/', 'procfs-root': '/proc' });
    const source = detectNet(ctx);
    const present = fs.readdirSync('/sys/class/net');
    const physical = present.filter((n) => n !== 'lo' && fs.existsSync(path.join('/sys/class/net', n, 'device')));
    const chosen = ((source?.details.interfaces ?? []) as { name: string }[]).map((i) => i.name);
    expect(chosen).not.toContain('lo');
    expect(chosen).toEqual(physical.length > 0 ? physical.sort() : present.filter((n) => n !== 'lo').sort());
    void source?.stop();
  });
});
