import type { FastifyInstance } from 'fastify';
import type { ApiMetrics } from './metrics';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Route patterns whose `:id` names a campaign or a run, and the log field it becomes. */
const ID_FIELDS: [prefix: string, field: 'campaignId' | 'runId'][] = [
  ['/v1/campaigns/:id', 'campaignId'],
  ['/v1/runs/:id', 'runId'],
];

/**
 * Per-request observability: every log line of a request about one campaign or run carries its
 * id (so `grep runId=…` across API and scheduler logs follows a run), and every response's
 * duration lands in the latency histogram under its route pattern — the pattern, never the URL,
 * which would make one series per run.
 */
export function observeRequests(app: FastifyInstance, metrics: ApiMetrics): void {
  app.addHook('onRequest', async (req, reply) => {
    const route = req.routeOptions.url;
    const id = (req.params as { id?: unknown } | undefined)?.id;
    // Only well-formed ids: a malformed one is refused with 400 and is not worth a log field.
    if (!route || typeof id !== 'string' || !UUID.test(id)) return;
    const field = ID_FIELDS.find(([prefix]) => route === prefix || route.startsWith(`${prefix}/`))?.[1];
    if (!field) return;
    // Fastify's "request completed" line is written through reply.log, a separate reference.
    req.log = req.log.child({ [field]: id });
    reply.log = req.log;
  });

  app.addHook('onResponse', async (req, reply) => {
    metrics.httpDuration.observe(
      { method: req.method, route: req.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
}
