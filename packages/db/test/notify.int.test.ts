// The LISTEN connection behind the event stream notices a connection that went silent without
// closing (a host that vanished, a firewall that dropped the flow: no FIN, no RST) and reconnects,
// instead of waiting forever for notifications that can no longer arrive.
import net from 'node:net';
import { createTestDatabase, waitFor, type TestDatabase } from '@erg/testkit';
import { createDatabase, listenForEvents, notifyEvent, type Database } from '../src';

/** A TCP relay to Postgres that can swallow traffic in both directions while keeping the sockets open. */
class SilenceableRelay {
  silent = false;
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  constructor(target: { host: string; port: number }) {
    this.server = net.createServer((inbound) => {
      const outbound = net.connect(target.port, target.host);
      for (const s of [inbound, outbound]) {
        this.sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => this.sockets.delete(s));
      }
      inbound.on('data', (d) => { if (!this.silent) outbound.write(d); });
      outbound.on('data', (d) => { if (!this.silent) inbound.write(d); });
      inbound.on('close', () => outbound.destroy());
      outbound.on('close', () => inbound.destroy());
    });
  }
  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

jest.setTimeout(60_000);

describe('listenForEvents', () => {
  let tdb: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  test('a connection gone silent is declared lost within the heartbeat budget, and LISTEN comes back', async () => {
    const url = new URL(tdb.url);
    const relay = new SilenceableRelay({ host: url.hostname || '127.0.0.1', port: Number(url.port || 5432) });
    url.hostname = '127.0.0.1';
    url.port = String(await relay.listen());
    const states: string[] = [];
    const events: unknown[] = [];
    const listener = listenForEvents({
      url: url.toString(), onEvent: (e) => events.push(e), onState: (s) => states.push(s),
      heartbeatMs: 200, answerTimeoutMs: 500, minBackoffMs: 50, maxBackoffMs: 200,
    });
    try {
      expect(await listener.whenListening(10_000)).toBe(true);
      relay.silent = true;
      await waitFor(() => (states.includes('lost') ? true : undefined), { timeoutMs: 10_000, what: 'the silent connection to be declared lost' });
      expect(listener.listening).toBe(false);
      relay.silent = false;
      expect(await listener.whenListening(10_000)).toBe(true);
      await notifyEvent(db, { kind: 'after-silence' });
      await waitFor(() => (events.some((e) => (e as { kind?: string }).kind === 'after-silence') ? true : undefined), {
        timeoutMs: 10_000, what: 'an event over the new connection',
      });
    } finally {
      await listener.close();
      await relay.close();
    }
  });
});
