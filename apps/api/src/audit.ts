import type { FastifyInstance, FastifyRequest } from 'fastify';
import { projectOfResource, recordAudit, type Database } from '@erg/db';

/**
 * What the audit log records for each mutating request: the action and the resource, derived
 * from the route pattern and its params. Every mutating /v1 route is in ROUTES; a route added
 * later and forgotten here still gets an entry, derived from its pattern (`derive`).
 *
 * Not audited: reads; telemetry ingest (thousands a minute per run, and not a decision anyone
 * makes); requests refused before anyone was identified (401: the log would be writable by
 * anyone) and those refused by the rate limit (429: a client that hammers would write one row per
 * refusal). Every other refusal (400, 403, 404, 409, 413, 422, 5xx) is logged with its status.
 */

export interface AuditTarget {
  action: string;
  resourceType: string;
  /** The route param that names the resource; none: the handler reports the created id. */
  param?: string;
}

/** `<METHOD> <route pattern>` → what it does. */
export const ROUTES: Record<string, AuditTarget> = {
  'POST /v1/clusters': { action: 'cluster.create', resourceType: 'cluster' },
  'PUT /v1/clusters/:name': { action: 'cluster.update', resourceType: 'cluster', param: 'name' },
  'PUT /v1/clusters/:name/credentials': { action: 'cluster.credentials', resourceType: 'cluster', param: 'name' },
  'PUT /v1/clusters/:name/carbon-intensity': { action: 'cluster.carbon-intensity', resourceType: 'cluster', param: 'name' },
  'PUT /v1/clusters/:name/node-report': { action: 'cluster.node-report', resourceType: 'cluster', param: 'name' },
  'POST /v1/campaigns': { action: 'campaign.create', resourceType: 'campaign' },
  'POST /v1/campaigns/:id/cancel': { action: 'campaign.cancel', resourceType: 'campaign', param: 'id' },
  'POST /v1/runs/:id/finish': { action: 'run.finish', resourceType: 'run', param: 'id' },
  'POST /v1/suites': { action: 'suite.create', resourceType: 'suite' },
  'PUT /v1/suites/:name': { action: 'suite.update', resourceType: 'suite', param: 'name' },
  'DELETE /v1/suites/:name': { action: 'suite.delete', resourceType: 'suite', param: 'name' },
  'POST /v1/suites/:name/trigger': { action: 'suite.trigger', resourceType: 'suite', param: 'name' },
  'POST /v1/users/:name/deactivate': { action: 'user.deactivate', resourceType: 'user', param: 'name' },
  'POST /v1/users/:name/reactivate': { action: 'user.reactivate', resourceType: 'user', param: 'name' },
  'POST /v1/projects/:name/deactivate': { action: 'project.deactivate', resourceType: 'project', param: 'name' },
  'POST /v1/projects/:name/reactivate': { action: 'project.reactivate', resourceType: 'project', param: 'name' },
  'POST /v1/clusters/:name/deactivate': { action: 'cluster.deactivate', resourceType: 'cluster', param: 'name' },
  'POST /v1/clusters/:name/reactivate': { action: 'cluster.reactivate', resourceType: 'cluster', param: 'name' },
};

const NOT_AUDITED = new Set(['POST /v1/runs/:id/telemetry']);
const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const VERB: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' };

function singular(collection: string): string {
  return collection.endsWith('ies') ? `${collection.slice(0, -3)}y` : collection.replace(/s$/, '');
}

/**
 * For routes not in ROUTES: `/things` → thing.create, `/things/:k` → thing.update|delete,
 * `/things/:k/verb` → thing.verb (e.g. POST /v1/tokens/:id/revoke → token.revoke).
 */
export function derive(method: string, pattern: string): AuditTarget {
  const segments = pattern.replace(/^\/v1\//, '').split('/').filter(Boolean);
  const last = segments[segments.length - 1] ?? '';
  const before = segments[segments.length - 2];
  if (last.startsWith(':')) return { action: `${singular(before ?? 'unknown')}.${VERB[method] ?? 'update'}`, resourceType: singular(before ?? 'unknown'), param: last.slice(1) };
  if (before?.startsWith(':') && segments.length >= 3) {
    const type = singular(segments[segments.length - 3]!);
    // A nested collection (POST /projects/:name/members) creates; anything else (PUT /clusters/:name/credentials) is a verb.
    return method === 'POST' && last.endsWith('s') ? { action: `${singular(last)}.${VERB[method] ?? 'update'}`, resourceType: singular(last) } : { action: `${type}.${last}`, resourceType: type, param: before.slice(1) };
  }
  return { action: `${singular(last || 'unknown')}.${VERB[method] ?? 'update'}`, resourceType: singular(last || 'unknown') };
}

/** What a request does, or null when it is not audited. Unknown routes (404) are `route.unknown`. */
export function auditTarget(method: string, pattern: string | undefined, path: string): AuditTarget | null {
  if (!MUTATING.has(method) || !path.startsWith('/v1/')) return null;
  if (!pattern) return { action: 'route.unknown', resourceType: 'route' };
  const key = `${method} ${pattern}`;
  if (NOT_AUDITED.has(key)) return null;
  return ROUTES[key] ?? derive(method, pattern);
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The id of what a create route made, for its audit entry. */
    auditResourceId?: string;
    /** A deleted resource's project, looked up before it is gone. */
    auditProjectId?: string | null;
  }
}

/** Tells the audit log which resource a create route made. */
export function auditCreated(req: FastifyRequest, id: string): void {
  req.auditResourceId = id;
}

function resourceIdOf(req: FastifyRequest, target: AuditTarget): string | null {
  if (target.param) {
    const value = (req.params as Record<string, unknown> | undefined)?.[target.param];
    return typeof value === 'string' ? value.slice(0, 200) : null;
  }
  return req.auditResourceId ?? null;
}

export function installAudit(app: FastifyInstance, db: Database): void {
  // A DELETE takes its resource's project with it: look it up while it still exists.
  app.addHook('preHandler', async (req) => {
    if (req.method !== 'DELETE') return;
    const target = auditTarget(req.method, req.routeOptions.url, req.url.split('?')[0] ?? '');
    if (!target) return;
    req.auditProjectId = await projectOfResource(db, target.resourceType, resourceIdOf(req, target)).catch(() => null);
  });

  app.addHook('onResponse', async (req, reply) => {
    const target = auditTarget(req.method, req.routeOptions.url, req.url.split('?')[0] ?? '');
    if (!target || reply.statusCode === 401 || reply.statusCode === 429) return;
    const identity = req.identity;
    if (!identity) return;
    const userAgent = req.headers['user-agent'];
    try {
      await recordAudit(db, {
        actorTokenId: identity.id,
        actorName: identity.name,
        action: target.action,
        resourceType: target.resourceType,
        resourceId: resourceIdOf(req, target),
        projectId: req.auditProjectId ?? null,
        statusCode: reply.statusCode,
        ip: req.ip ?? null,
        userAgent: typeof userAgent === 'string' ? userAgent.slice(0, 512) : null,
        requestId: String(req.id),
      });
    } catch (err) {
      // The response is already sent; a lost audit row is logged loudly rather than failing anything.
      req.log.error({ err, action: target.action }, 'could not write the audit log entry');
    }
  });
}
