import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ServerResponse } from 'node:http';
import { findCampaignProject, reauthenticateTokens } from '@erg/db';
import { ErrorBody, EventData, EventsQuery, type StreamCloseReason } from '@erg/spec';
import type { AppDeps } from '../app';
import { access, visibleProjects } from '../access';
import { EventHub, type HubEvent } from '../event-hub';

/** A comment line this often keeps proxies and load balancers from closing an idle stream. */
const KEEPALIVE_MS = 15_000;
/** How long a new stream waits for the LISTEN connection before saying hello anyway. */
const LISTEN_WAIT_MS = 5_000;
/** A client this far behind (bytes buffered, unsent) is cut off rather than buffered without end. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

function frame(e: { id: number; name: string; data: unknown }): string {
  return `id: ${e.id}\nevent: ${e.name}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

export const eventRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    const hub = new EventHub(deps.config.DATABASE_URL, app.log, (campaignId) => findCampaignProject(deps.db, campaignId), {
      reauthenticate: (ids) => reauthenticateTokens(deps.db, ids),
      recheckMs: deps.config.ERG_EVENTS_ACCESS_CHECK_MS,
    });
    const open = new Set<ServerResponse>();
    // Streams never end by themselves: end them before the server waits for its connections.
    app.addHook('preClose', async () => {
      for (const res of open) res.end();
      open.clear();
    });
    app.addHook('onClose', async () => hub.close());

    app.get(
      '/events',
      {
        config: access.listing('campaign.read'),
        schema: {
          tags: ['events'],
          description:
            'Server-Sent Events (text/event-stream) with the bearer token: `hello` on connect, `run` for every run state change, ' +
            '`power` (a run\'s total power, at most once per run per second while telemetry arrives), and a `: keepalive` comment ' +
            'every 15 s. Each event has an `id:`. Events that happen while the API reconnects to Postgres are not replayed. ' +
            'The stream carries what the token could read when it opened; when that access ends or narrows (the token revoked or expired, ' +
            'its user deactivated or removed from a project the stream carried) erg sends `closed` with the reason and ends the stream: at once ' +
            'for a revocation, deactivation or removal, within ERG_EVENTS_ACCESS_CHECK_MS (5 s) for an expiry.',
          querystring: EventsQuery,
          response: {
            200: EventData,
            400: ErrorBody,
          },
        },
      },
      async (req, reply) => {
        const listening = await hub.whenListening(LISTEN_WAIT_MS);
        if (!listening) req.log.warn('event stream opened while the LISTEN connection is down; events follow once it is back');
        reply.hijack();
        const res = reply.raw;
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache, no-transform',
          connection: 'keep-alive',
          // nginx: do not buffer the stream.
          'x-accel-buffering': 'no',
        });
        open.add(res);
        const identity = req.identity!;
        let unsubscribe = () => {};
        const keepalive = setInterval(() => write(': keepalive\n\n'), KEEPALIVE_MS);
        const cleanup = () => {
          clearInterval(keepalive);
          unsubscribe();
          open.delete(res);
        };
        // `last`: the stream ends with this text and gets nothing more (no write after its end).
        const write = (text: string, last = false) => {
          if (res.writableEnded) return;
          if (!last) return void res.write(text);
          cleanup();
          res.end(text);
        };
        const send = (e: HubEvent) => {
          if (res.writableLength > MAX_BUFFERED_BYTES) {
            req.log.warn('event stream: client too slow, closing its stream');
            return write('', true);
          }
          write(frame(e));
        };
        const close = (reason: StreamCloseReason, message: string) => {
          req.log.info({ reason, tokenId: identity.id }, 'event stream: closed, its access ended');
          write(frame({ id: hub.nextId(), name: 'closed', data: { reason, message } }), true);
        };
        res.write(frame({ id: hub.nextId(), name: 'hello', data: { at: new Date().toISOString() } }));
        unsubscribe = hub.subscribe({ campaign: req.query.campaign, run: req.query.run, projectIds: visibleProjects(identity) }, send, {
          tokenId: identity.id, userId: identity.userId, visible: (now) => visibleProjects(now), close,
        });
        res.on('close', cleanup);
        req.raw.on('close', cleanup);
      },
    );
  };
