import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { listAudit } from '@erg/db';
import { AuditPage, AuditQuery, ErrorBody } from '@erg/spec';
import type { AppDeps } from '../app';
import { access, visibleProjects } from '../access';
import { errors } from '../errors';

/** Page cursors are opaque to clients: base64url of the last entry's id. */
function encodeCursor(id: bigint): string {
  return Buffer.from(`audit:${id}`).toString('base64url');
}

function decodeCursor(cursor: string | undefined): bigint | undefined {
  if (cursor === undefined) return undefined;
  const m = /^audit:(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw errors.validation('request querystring', [{ path: 'cursor', code: 'invalid_cursor', message: 'not a cursor returned by this API; pass the `next` of the previous page' }]);
  return BigInt(m[1]!);
}

export const auditRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/audit',
      {
        // Admins read every entry; a project's maintainers read that project's entries.
        config: access.listing('audit.read'),
        schema: {
          tags: ['audit'],
          description:
            'The audit log: one entry per mutating request (telemetry ingest excepted), refused attempts included, newest first. ' +
            'Admins see every entry; maintainers see the entries of their projects.',
          querystring: AuditQuery,
          response: { 200: AuditPage, 400: ErrorBody, 403: ErrorBody },
        },
      },
      async (req) => {
        const identity = req.identity;
        if (!identity) throw errors.unauthorized();
        const projectIds = visibleProjects(identity, 'maintainer') ?? undefined;
        if (projectIds && projectIds.length === 0) throw errors.forbidden('reading the audit log needs the maintainer role in a project, or an admin token');
        const q = req.query;
        const [resourceType, ...rest] = q.resource?.split(':') ?? [];
        const page = await listAudit(deps.db, {
          since: q.since ? new Date(q.since) : undefined,
          until: q.until ? new Date(q.until) : undefined,
          actor: q.actor,
          action: q.action,
          resourceType,
          resourceId: rest.length ? rest.join(':') : undefined,
          projectIds,
          limit: q.limit,
          before: decodeCursor(q.cursor),
        });
        return {
          items: page.items.map((e) => ({ ...e, id: e.id.toString(), at: e.at.toISOString() })),
          next: page.next === null ? null : encodeCursor(page.next),
        };
      },
    );
  };
