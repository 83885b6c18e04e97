import { z } from 'zod';

/** GET /v1/audit: who changed what, newest first. */
export const AuditQuery = z.object({
  since: z.iso.datetime({ offset: true, error: 'an ISO 8601 time, e.g. 2026-11-30T10:00:00Z' }).optional().describe('only entries at or after this time'),
  until: z.iso.datetime({ offset: true, error: 'an ISO 8601 time, e.g. 2026-11-30T10:00:00Z' }).optional().describe('only entries before this time'),
  actor: z.string().min(1).max(200).optional().describe('a token id, or a token name'),
  action: z.string().regex(/^[a-z][a-z0-9-]*\.[a-z][a-z0-9-]*$/, { error: 'an action like campaign.create' }).optional(),
  resource: z
    .string()
    .regex(/^[a-z][a-z0-9-]*(:.{1,200})?$/, { error: 'a resource type (campaign) or type:id (campaign:<id>, cluster:<name>)' })
    .optional()
    .describe('a resource type, or type:id'),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(200).optional().describe('the `next` of the previous page'),
});
export type AuditQuery = z.infer<typeof AuditQuery>;

export const AuditEntryView = z
  .object({
    id: z.string().describe('increasing with time'),
    at: z.string(),
    actorTokenId: z.string().nullable(),
    actorName: z.string().nullable(),
    action: z.string().describe('<resource>.<verb>, e.g. campaign.create, cluster.update, suite.trigger, campaign.cancel'),
    resourceType: z.string().nullable(),
    resourceId: z.string().nullable().describe('an id, or a name for clusters and suites'),
    projectId: z.string().nullable(),
    statusCode: z.number().describe('the response status: refused attempts are logged too'),
    ip: z.string().nullable(),
    userAgent: z.string().nullable(),
    requestId: z.string().nullable(),
  })
  .meta({ id: 'AuditEntry' });
export type AuditEntryView = z.infer<typeof AuditEntryView>;

export const AuditPage = z
  .object({
    items: z.array(AuditEntryView),
    next: z.string().nullable().describe('cursor of the next page; null on the last'),
  })
  .meta({ id: 'AuditPage' });
