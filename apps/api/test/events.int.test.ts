import { EVENTS_LISTENER_NAME } from '@erg/db';
import { backendPids, expireApiToken, terminateBackend } from '@erg/db/testing';
import { waitFor } from '@erg/testkit';
import { readEventStream } from './event-stream';
import { startTestApi, type TestApi } from './helpers';

/** Import campaigns need no cluster: their runs stay pending until cancelled or finished. */
const spec = (name: string) => ({ name, execution: 'import', repetitions: 1, parameters: { n: [1, 2] } });

const openStream = readEventStream;

describe('GET /v1/events (Server-Sent Events over LISTEN/NOTIFY; Postgres + Redis)', () => {
  let t: TestApi;
  let base: string;

  async function call(method: string, url: string, body?: unknown) {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${t.token}` }, ...(body === undefined ? {} : { payload: body as object }) });
    return res.body === '' ? null : res.json();
  }

  beforeAll(async () => {
    // The periodic re-check of streams' access far away: the notices alone must end streams here.
    t = await startTestApi({ ERG_EVENTS_ACCESS_CHECK_MS: '600000' });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await t.close();
  });

  test('a member\'s stream carries only the events of their projects', async () => {
    for (const name of ['ev-mine', 'ev-theirs']) await call('POST', '/v1/projects', { name });
    await call('POST', '/v1/users', { name: 'ev-viewer' });
    await call('PUT', '/v1/projects/ev-mine/members/ev-viewer', { role: 'viewer' });
    const token = (await call('POST', '/v1/tokens', { name: 'stream', user: 'ev-viewer' })).token as string;
    const mine = await call('POST', '/v1/campaigns?project=ev-mine', spec('mine'));
    const theirs = await call('POST', '/v1/campaigns?project=ev-theirs', spec('theirs'));
    const stream = await openStream(`${base}/v1/events`, token);
    try {
      await stream.next((e) => e.event === 'hello', 'hello');
      // Theirs first: once mine has arrived, theirs would have been delivered before it.
      await call('POST', `/v1/campaigns/${theirs.id}/cancel`);
      await call('POST', `/v1/campaigns/${mine.id}/cancel`);
      await waitFor(() => stream.events.filter((e) => e.event === 'run' && e.data.campaignId === mine.id).length === 2, { what: "both of my campaign's runs", timeoutMs: 10_000 });
      expect(stream.events.filter((e) => e.event === 'run' && e.data.campaignId === theirs.id)).toEqual([]);
      // Asking for the other project's campaign by id shows nothing either.
      const filtered = await openStream(`${base}/v1/events?campaign=${theirs.id}`, token);
      await filtered.next((e) => e.event === 'hello', 'hello');
      await filtered.close();
    } finally {
      await stream.close();
    }
  });

  /** A user with a viewer role in each of `projects`, and a token of theirs. */
  async function member(name: string, projects: string[]): Promise<{ token: string; tokenId: string }> {
    await call('POST', '/v1/users', { name });
    for (const p of projects) await call('PUT', `/v1/projects/${p}/members/${name}`, { role: 'viewer' });
    const created = await call('POST', '/v1/tokens', { name: 'stream', user: name });
    return { token: created.token, tokenId: created.id };
  }

  /** Waits for the stream's `closed` event and its end; returns the event's data. */
  async function closedWith(stream: Awaited<ReturnType<typeof openStream>>, what: string) {
    const closed = await stream.next((e) => e.event === 'closed', what);
    await waitFor(() => stream.ended, { what: `${what}: the stream to end`, timeoutMs: 10_000 });
    expect(stream.events.at(-1)).toBe(closed);
    return closed.data as { reason: string; message: string };
  }

  test("a revoked token's stream gets `closed` and ends at once; no later event reaches it", async () => {
    await call('POST', '/v1/projects', { name: 'ev-revoke' });
    const { token, tokenId } = await member('ev-revoked', ['ev-revoke']);
    const campaign = await call('POST', '/v1/campaigns?project=ev-revoke', spec('revoke'));
    const stream = await openStream(`${base}/v1/events`, token);
    try {
      await stream.next((e) => e.event === 'hello', 'hello');
      await call('DELETE', `/v1/tokens/${tokenId}`);
      expect(await closedWith(stream, 'the revocation to close the stream')).toEqual({ reason: 'token_revoked', message: expect.stringContaining('revoked') });
      await call('POST', `/v1/campaigns/${campaign.id}/cancel`);
      expect(stream.events.filter((e) => e.event === 'run')).toEqual([]);
    } finally {
      await stream.close();
    }
  });

  test('a user removed from a project: their stream ends (access_changed); another member\'s stream goes on', async () => {
    for (const name of ['ev-shared', 'ev-kept']) await call('POST', '/v1/projects', { name });
    const leaving = await member('ev-leaving', ['ev-shared', 'ev-kept']);
    const staying = await member('ev-staying', ['ev-shared']);
    const campaign = await call('POST', '/v1/campaigns?project=ev-shared', spec('shared'));
    const gone = await openStream(`${base}/v1/events`, leaving.token);
    const kept = await openStream(`${base}/v1/events`, staying.token);
    try {
      await gone.next((e) => e.event === 'hello', 'hello');
      await kept.next((e) => e.event === 'hello', 'hello');
      await call('DELETE', '/v1/projects/ev-shared/members/ev-leaving');
      expect((await closedWith(gone, 'the removal to close the stream')).reason).toBe('access_changed');
      await call('POST', `/v1/campaigns/${campaign.id}/cancel`);
      await waitFor(() => kept.events.filter((e) => e.event === 'run' && e.data.campaignId === campaign.id).length === 2, { what: "the other member's events", timeoutMs: 10_000 });
      expect(kept.ended).toBe(false);
      expect(gone.events.filter((e) => e.event === 'run')).toEqual([]);
      // The token still works, for what it still reaches.
      expect((await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${leaving.token}` } })).status).toBe(200);
    } finally {
      await gone.close();
      await kept.close();
    }
  });

  test('deactivating a user ends their streams at once and refuses their tokens; reactivating lets the tokens in again', async () => {
    await call('POST', '/v1/projects', { name: 'ev-deact' });
    const { token } = await member('ev-departed', ['ev-deact']);
    const stream = await openStream(`${base}/v1/events`, token);
    try {
      await stream.next((e) => e.event === 'hello', 'hello');
      const deactivated = await call('POST', '/v1/users/ev-departed/deactivate');
      expect(Date.parse(deactivated.deactivatedAt)).not.toBeNaN();
      expect((await closedWith(stream, 'the deactivation to close the stream')).reason).toBe('user_deactivated');
      expect((await fetch(`${base}/v1/events`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
      expect((await call('POST', '/v1/users/ev-departed/reactivate')).deactivatedAt).toBeNull();
      expect((await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    } finally {
      await stream.close();
    }
  });

  test('needs a token', async () => {
    const res = await fetch(`${base}/v1/events`);
    expect(res.status).toBe(401);
  });

  test('says hello, then streams run state changes; the campaign filter drops other campaigns', async () => {
    const a = await call('POST', '/v1/campaigns', spec('a'));
    const b = await call('POST', '/v1/campaigns', spec('b'));
    const all = await openStream(`${base}/v1/events`, t.token);
    const onlyA = await openStream(`${base}/v1/events?campaign=${a.id}`, t.token);
    try {
      expect(all.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      await all.next((e) => e.event === 'hello', 'hello');
      await onlyA.next((e) => e.event === 'hello', 'hello');
      expect(Date.parse(all.events[0]!.data.at)).not.toBeNaN();

      await call('POST', `/v1/campaigns/${b.id}/cancel`);
      await call('POST', `/v1/campaigns/${a.id}/cancel`);
      const seen = await all.next((e) => e.event === 'run' && e.data.campaignId === b.id, "b's cancellation");
      expect(seen.data).toMatchObject({ campaignId: b.id, cluster: null, from: 'pending', to: 'cancelled' });
      expect(b.runs.map((r: { id: string }) => r.id)).toContain(seen.data.runId);
      expect(Date.parse(seen.data.at)).not.toBeNaN();
      // Notifications arrive in commit order: once a's are in, b's would have been too.
      await onlyA.next((e) => e.event === 'run' && e.data.to === 'cancelled', "a's cancellation");
      await waitFor(() => onlyA.events.filter((e) => e.event === 'run').length === 2, { what: "both of a's runs", timeoutMs: 10_000 });
      expect(onlyA.events.filter((e) => e.event === 'run').every((e) => e.data.campaignId === a.id)).toBe(true);
      // ids increase along a stream.
      const ids = all.events.map((e) => Number(e.id));
      expect([...ids].sort((x, y) => x - y)).toEqual(ids);
    } finally {
      await all.close();
      await onlyA.close();
    }
  });

  test('a telemetry batch produces a power event with the run\'s total power; the run filter keeps one run', async () => {
    const c = await call('POST', '/v1/campaigns', spec('c'));
    const [r1, r2] = c.runs as { id: string }[];
    const stream = await openStream(`${base}/v1/events?run=${r1!.id}`, t.token);
    try {
      await stream.next((e) => e.event === 'hello', 'hello');
      const now = Date.now();
      for (const run of [r2!, r1!]) {
        await call('POST', `/v1/runs/${run.id}/telemetry`, {
          node: 'n1', seq: 0, samples: [{ sensor: 'gpu0.power', t: now - 500, v: 310 }, { sensor: 'cpu0.power', t: now - 400, v: 90 }],
        });
      }
      const power = await stream.next((e) => e.event === 'power', 'a power event');
      expect(power.data).toEqual({ runId: r1!.id, campaignId: c.id, t: now - 400, w: 400 });
      expect(stream.events.filter((e) => e.event === 'power').every((e) => e.data.runId === r1!.id)).toBe(true);
    } finally {
      await stream.close();
    }
  });

  test('survives the LISTEN connection being terminated: later changes still arrive on the open stream', async () => {
    const stream = await openStream(`${base}/v1/events`, t.token);
    try {
      await stream.next((e) => e.event === 'hello', 'hello');
      const listener = () => backendPids(t.db, EVENTS_LISTENER_NAME);
      const [pid] = await listener();
      expect(pid).toBeDefined();
      await terminateBackend(t.db, pid!);
      await waitFor(async () => { const now = await listener(); return now.length === 1 && now[0] !== pid; }, { what: 'a new LISTEN connection', timeoutMs: 10_000 });
      // The new connection shows in pg_stat_activity right after connecting, just before LISTEN: retry the change until one arrives.
      let d: { id: string } | undefined;
      await waitFor(async () => {
        d = await call('POST', '/v1/campaigns', spec('d'));
        return waitFor(() => stream.events.some((e) => e.event === 'run' && e.data.campaignId === d!.id), { timeoutMs: 1000, intervalMs: 20 }).catch(() => false);
      }, { what: 'a run event after the reconnect', timeoutMs: 10_000 });
      expect(stream.ended).toBe(false);
    } finally {
      await stream.close();
    }
  });

  test('an expired token\'s stream is ended by the periodic check (expiry sends no notice)', async () => {
    const other = await startTestApi({ ERG_EVENTS_ACCESS_CHECK_MS: '200' });
    try {
      await other.app.listen({ host: '127.0.0.1', port: 0 });
      const created = (await other.app.inject({ method: 'POST', url: '/v1/tokens', headers: { authorization: `Bearer ${other.token}` }, payload: { name: 'short' } })).json();
      const stream = await openStream(`http://127.0.0.1:${(other.app.server.address() as { port: number }).port}/v1/events`, created.token);
      try {
        await stream.next((e) => e.event === 'hello', 'hello');
        await expireApiToken(other.db, created.id);
        expect((await closedWith(stream, 'the expiry to close the stream')).reason).toBe('token_expired');
      } finally {
        await stream.close();
      }
    } finally {
      await other.close();
    }
  });

  test('app.close() ends open streams', async () => {
    const other = await startTestApi();
    await other.app.listen({ host: '127.0.0.1', port: 0 });
    const stream = await openStream(`http://127.0.0.1:${(other.app.server.address() as { port: number }).port}/v1/events`, other.token);
    await stream.next((e) => e.event === 'hello', 'hello');
    await other.close();
    await waitFor(() => stream.ended, { what: 'the stream to end', timeoutMs: 5000 });
  });
});
