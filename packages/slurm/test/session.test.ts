/**
 * Session (session.ts): what ends with a session — its operations in flight and its callers
 * waiting for a channel fail with the session's end error — and the channel counters. A real,
 * unconnected ssh2 Client stands in the session: none of this talks to a server.
 */
import { Client } from 'ssh2';
import { ChannelError, ChannelOpenError, ConnectionLostError, SshTimeoutError } from '../src';
import { ChannelCounters, Session } from '../src/session';

const names = { hostPort: 'login.example.org:22' };
const session = (maxSessions = 2, counters = new ChannelCounters()) => new Session(new Client(), [], maxSessions, counters, names);
const lost = () => new ConnectionLostError(names.hostPort, 'test cut');

describe('Session.track', () => {
  it('settles once, with the first of resolve and reject', async () => {
    const s = session();
    await expect(s.track<number>((resolve, reject) => { resolve(1); reject(new Error('late')); resolve(2); })).resolves.toBe(1);
    await expect(s.track<number>(() => { throw new Error('thrown'); })).rejects.toThrow('thrown');
  });

  it('fails an operation in flight with the error that ends the session, and refuses new ones with it', async () => {
    const s = session();
    const inFlight = s.track<void>(() => undefined);
    const err = lost();
    s.end(err);
    await expect(inFlight).rejects.toBe(err);
    await expect(s.track<void>((resolve) => resolve())).rejects.toBe(err);
    expect(s).toMatchObject({ alive: false, endedBy: err });
  });

  it('ends once: a second end changes nothing', async () => {
    const s = session();
    const first = lost();
    s.end(first);
    s.end(new ConnectionLostError(names.hostPort, 'second'));
    expect(s.endedBy).toBe(first);
  });

  it('calls a watcher when the session ends, not after it stopped watching', () => {
    const s = session();
    const seen: unknown[] = [];
    const kept = (e: unknown) => seen.push(['kept', e]);
    const dropped = (e: unknown) => seen.push(['dropped', e]);
    s.watchEnd(kept);
    s.watchEnd(dropped);
    s.unwatchEnd(dropped);
    const err = lost();
    s.end(err);
    expect(seen).toEqual([['kept', err]]);
  });
});

describe('Session.acquireChannel', () => {
  it('holds at most maxSessions permits, counts them, and releases each once', async () => {
    const counters = new ChannelCounters();
    const s = session(2, counters);
    const a = await s.acquireChannel();
    const b = await s.acquireChannel();
    let third: (() => void) | null = null;
    const waiting = s.acquireChannel().then((release) => (third = release));
    await new Promise((resolve) => setImmediate(resolve));
    expect(third).toBeNull();
    expect(s.channels.waiting).toBe(1);
    expect(counters).toMatchObject({ open: 2, maxOpen: 2 });
    a();
    a(); // a second release of the same permit is no second permit
    await waiting;
    expect(counters).toMatchObject({ open: 2, maxOpen: 2 });
    b();
    third!();
    expect(counters).toMatchObject({ open: 0, maxOpen: 2 });
  });

  it('fails the callers waiting for a channel when the session ends, and later ones too', async () => {
    const s = session(1);
    await s.acquireChannel();
    const waiting = s.acquireChannel();
    const err = lost();
    s.end(err);
    await expect(waiting).rejects.toBe(err);
    await expect(s.acquireChannel()).rejects.toBe(err);
  });
});

describe('what a failure means', () => {
  it('on a live session: the channel failed, or the server refused to open one (retryable)', () => {
    const s = session();
    const cause = new Error('boom');
    expect(s.channelFailure(cause)).toBeInstanceOf(ChannelError);
    expect(s.channelOpenError(cause)).toBeInstanceOf(ChannelOpenError);
    expect(s.channelOpenError(cause)).toMatchObject({ retryable: true });
    expect(s.endError('channel closed')).toBeInstanceOf(ConnectionLostError);
  });

  it('once the session ended: the error that ended it', () => {
    const s = session();
    const err = new SshTimeoutError(names.hostPort, 1, 'keepalive');
    s.end(err);
    const cause = new Error('boom');
    expect(s.channelFailure(cause)).toBe(err);
    expect(s.channelOpenError(cause)).toBe(err);
    expect(s.endError('channel closed')).toBe(err);
  });

  it('names the login node as the connection names it now', () => {
    const source = { hostPort: 'old.example.org:22' };
    const s = new Session(new Client(), [], 1, new ChannelCounters(), source);
    source.hostPort = 'new.example.org:22';
    expect(s.endError('x').message).toContain('new.example.org:22');
  });
});
