import { Backoff, backoffDelay } from '@erg/backoff';
import { applyPower, applyRunEvent, debounce, elapsedSeconds, EVENT_STREAM_BACKOFF, filtersFromQuery, formatHash, openEventStream, parseHash, queuePath, SseParser, toErgEvent, visibleRange, type ErgEvent, type Queue, type QueueRun, type StreamStatus } from '@erg/web';

describe('SSE parser', () => {
  it('parses event, data and id lines and dispatches on a blank line', () => {
    const p = new SseParser();
    expect(p.push('id: 7\nevent: run\ndata: {"a":1}\n\n')).toEqual([{ event: 'run', data: '{"a":1}', id: '7', retry: null }]);
  });

  it('handles chunks split anywhere, CRLF and CR line ends, comments and multi-line data', () => {
    const p = new SseParser();
    const text = ': keepalive\r\n\r\nevent: power\r\ndata: line1\r\ndata:line2\r\n\r\nevent:hello\rdata: {}\r\r';
    const out = [];
    for (const ch of text) out.push(...p.push(ch));
    expect(out.map((m) => [m.event, m.data])).toEqual([['power', 'line1\nline2'], ['hello', '{}']]);
    expect(p.comments).toBe(1);
  });

  it('ignores blocks without data and unknown fields, defaults the event name, keeps the last id', () => {
    const p = new SseParser();
    expect(p.push('event: run\n\n')).toEqual([]);
    expect(p.push('id: 3\nfoo: bar\ndata\n\n')).toEqual([{ event: 'message', data: '', id: '3', retry: null }]);
    expect(p.push('data: x\n\n')[0]!.id).toBe('3');
    expect(p.push('retry: 2000\ndata: y\n\n')[0]!.retry).toBe(2000);
  });

  it('turns messages into typed events', () => {
    expect(toErgEvent({ event: 'power', data: '{"runId":"r","campaignId":"c","t":1,"w":2}', id: '1', retry: null })).toEqual({ type: 'power', id: '1', data: { runId: 'r', campaignId: 'c', t: 1, w: 2 } });
    expect(toErgEvent({ event: 'power', data: 'not json', id: null, retry: null })).toBeNull();
    expect(toErgEvent({ event: 'other', data: '{}', id: null, retry: null })).toBeNull();
  });
});

describe('reconnect backoff', () => {
  it('doubles from the base up to the cap, with jitter inside [half, full]', () => {
    expect([1, 2, 3, 4, 11].map((failures) => backoffDelay(failures, { ...EVENT_STREAM_BACKOFF, maxMs: 4000, jitter: 0 }))).toEqual([500, 1000, 2000, 4000, 4000]);
    expect(backoffDelay(3, EVENT_STREAM_BACKOFF, () => 0)).toBe(1000);
    expect(backoffDelay(3, EVENT_STREAM_BACKOFF, () => 0.999999)).toBe(2000);
    expect(backoffDelay(20, EVENT_STREAM_BACKOFF, () => 0.999999)).toBe(15_000);
  });

  it('resets after a success', () => {
    const b = new Backoff({ ...EVENT_STREAM_BACKOFF, initialMs: 100, jitter: 0 });
    expect([b.next(), b.next(), b.next()]).toEqual([100, 200, 400]);
    b.succeeded();
    expect(b.next()).toBe(100);
  });
});

describe('event stream', () => {
  function sseResponse(chunks: string[]): Response {
    const enc = new TextEncoder();
    return new Response(new ReadableStream({ start(c) { for (const ch of chunks) c.enqueue(enc.encode(ch)); c.close(); } }), { status: 200 });
  }

  it('sends the token, delivers events, reconnects after the stream ends and asks for a resync', async () => {
    const calls: RequestInit[] = [];
    let n = 0;
    const fakeFetch = (async (_url: string, init: RequestInit) => {
      calls.push(init);
      n++;
      if (n === 2) throw new Error('connection refused'); // the API restarting
      return sseResponse(n === 1 ? ['event: hello\ndata: {"at":"x"}\n\n', 'event: run\ndata: {"runId":"r"', ',"to":"running"}\n\n'] : ['event: hello\ndata: {"at":"y"}\n\n']);
    }) as unknown as typeof fetch;
    const events: ErgEvent[] = [];
    const statuses: StreamStatus[] = [];
    let resyncs = 0;
    const s = openEventStream({ url: '/v1/events', token: 'erg_t', fetch: fakeFetch, backoff: { initialMs: 5, jitter: 0 }, onEvent: (e) => events.push(e), onStatus: (x) => statuses.push(x), onResync: () => resyncs++ });
    const deadline = Date.now() + 2000;
    while (events.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    s.close();
    expect(events.map((e) => e.type)).toEqual(['hello', 'run', 'hello']);
    expect((calls[0]!.headers as Record<string, string>).authorization).toBe('Bearer erg_t');
    expect(statuses.slice(0, 4)).toEqual(['connecting', 'open', 'reconnecting', 'reconnecting']);
    expect(statuses).toContain('closed');
    expect(resyncs).toBe(1);
  });

  it('stops on 401', async () => {
    const statuses: StreamStatus[] = [];
    const fakeFetch = (async () => new Response('{}', { status: 401 })) as unknown as typeof fetch;
    openEventStream({ url: '/v1/events', token: 'bad', fetch: fakeFetch, onEvent: () => undefined, onStatus: (x) => statuses.push(x) });
    await new Promise((r) => setTimeout(r, 20));
    expect(statuses).toEqual(['connecting', 'unauthorized']);
  });
});

describe('hash routes', () => {
  it('parses and formats pages and filters', () => {
    expect(parseHash('')).toEqual({ page: 'queue', query: {} });
    expect(parseHash('#/queue?state=running&cluster=local&owner=')).toEqual({ page: 'queue', query: { state: 'running', cluster: 'local' } });
    expect(parseHash('#/campaigns/abc')).toEqual({ page: 'campaign', id: 'abc', query: {} });
    expect(parseHash('#/runs/r1')).toMatchObject({ page: 'run', id: 'r1' });
    expect(formatHash({ page: 'queue', query: { state: 'running', cluster: 'a b' } })).toBe('#/queue?cluster=a+b&state=running');
    const h = formatHash({ page: 'queue', query: { owner: 'suite:nightly', campaign: 'c1' } });
    expect(parseHash(h).query).toEqual({ owner: 'suite:nightly', campaign: 'c1' });
    expect(filtersFromQuery({ cluster: 'x', junk: 'y' })).toEqual({ cluster: 'x' });
    expect(queuePath({ cluster: 'x', state: 'running' }, 5000)).toBe('/v1/queue?cluster=x&state=running&limit=5000');
    expect(queuePath({})).toBe('/v1/queue');
  });
});

describe('queue model', () => {
  const run = (id: string, state: QueueRun['state'], extra: Partial<QueueRun> = {}): QueueRun => ({
    id, campaignId: 'c', campaignName: 'camp', owner: null, cluster: 'local', configurationKey: 'n=1', parameters: {}, repetition: 1, state,
    slurmJobId: null, partition: null, nodes: 1, nodeList: null, createdAt: '2026-11-30T03:00:00.000Z', submittedAt: '2026-11-30T03:00:10.000Z',
    startedAt: null, reason: null, powerW: null, ...extra,
  });
  const queue = (): Queue => ({ clusters: [{ name: 'local', runCounts: { queued: 2, running: 1 }, lastError: null, lastContactAt: null }], runs: [run('a', 'running'), run('b', 'queued'), run('c', 'queued')], total: 3, truncated: false });

  it('moves a run on a run event and shifts its cluster counts', () => {
    const q = applyRunEvent(queue(), { runId: 'b', campaignId: 'c', cluster: 'local', from: 'queued', to: 'running', at: '2026-11-30T03:01:00.000Z' });
    expect(q.runs.find((r) => r.id === 'b')).toMatchObject({ state: 'running', startedAt: '2026-11-30T03:01:00.000Z' });
    expect(q.clusters[0]!.runCounts).toEqual({ queued: 1, running: 2 });
    const done = applyRunEvent(q, { runId: 'a', campaignId: 'c', cluster: 'local', from: 'running', to: 'completed', at: 'x' });
    expect(done.runs.map((r) => r.id)).toEqual(['b', 'c']);
    expect(done.clusters[0]!.runCounts).toEqual({ queued: 1, running: 1, completed: 1 });
  });

  it('updates power in place and leaves unknown runs alone', () => {
    const runs = queue().runs;
    const next = applyPower(runs, { runId: 'a', campaignId: 'c', t: 1, w: 123 });
    expect(next[0]!.powerW).toBe(123);
    expect(runs[0]!.powerW).toBeNull();
    expect(applyPower(runs, { runId: 'zz', campaignId: 'c', t: 1, w: 1 })).toBe(runs);
  });

  it('counts time in queue from submission and time running from start', () => {
    const now = Date.parse('2026-11-30T03:01:10.000Z');
    expect(elapsedSeconds(run('q', 'queued'), now)).toBe(60);
    expect(elapsedSeconds(run('p', 'pending', { submittedAt: null }), now)).toBe(70);
    expect(elapsedSeconds(run('r', 'running', { startedAt: '2026-11-30T03:01:00.000Z' }), now)).toBe(10);
  });

  it('renders only the rows in view', () => {
    expect(visibleRange(0, 600, 30, 10_000, 5)).toEqual([0, 25]);
    expect(visibleRange(30 * 5000, 600, 30, 10_000, 5)).toEqual([4995, 5025]);
    expect(visibleRange(30 * 9990, 600, 30, 10_000, 5)).toEqual([9985, 10_000]);
    expect(visibleRange(0, 600, 30, 3)).toEqual([0, 3]);
  });

  it('debounces bursts into one trailing call', () => {
    jest.useFakeTimers();
    let calls = 0;
    const d = debounce(() => calls++, 100);
    d.call(); d.call(); jest.advanceTimersByTime(50); d.call();
    jest.advanceTimersByTime(99);
    expect(calls).toBe(0);
    jest.advanceTimersByTime(1);
    expect(calls).toBe(1);
    d.call(); d.cancel(); jest.advanceTimersByTime(200);
    expect(calls).toBe(1);
    jest.useRealTimers();
  });
});
