import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { findProjectByName, readWebhookPolicy, setProjectWebhookPolicy, type ProjectRecord } from '@erg/db';
import { ErrorBody, WebhookPolicy, WebhookPolicyView } from '@erg/spec';
import { policyIssues } from '@erg/suites';
import type { AppDeps } from '../app';
import { access } from '../access';
import { errors } from '../errors';
import { BODY_LIMITS } from '../body-limits';

const ProjectParams = z.object({ name: z.string().min(1).max(63) });

const view = (project: ProjectRecord) => ({ project: project.name, ...readWebhookPolicy(project.webhookPolicy) });

/**
 * Where a project's suites may send webhooks (see @erg/suites webhook-policy.ts): its members
 * read it, to know which URLs will be accepted; only admins change it, because it opens erg's
 * own network to requests that the project's maintainers write.
 */
export const webhookPolicyRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/projects/:name/webhook-policy',
      {
        config: access.project('project.read'),
        schema: {
          tags: ['access'],
          description: "Where the project's suite webhooks may go: https only unless allowHttp, public addresses only unless allowHosts lists the host.",
          params: ProjectParams,
          response: { 200: WebhookPolicyView, 404: ErrorBody },
        },
      },
      async (req) => {
        const project = await findProjectByName(deps.db, req.params.name);
        if (!project) throw errors.notFound('project', req.params.name);
        return view(project);
      },
    );

    app.put(
      '/projects/:name/webhook-policy',
      {
        config: access.project('network-policy.manage'),
        bodyLimit: BODY_LIMITS.action,
        schema: {
          tags: ['access'],
          description:
            "Admins only. Replaces the project's webhook policy: allowHttp (accept http:// URLs) and allowHosts (internal CI hosts webhooks may reach: " +
            'host names, *.suffixes, IP addresses, CIDR blocks no wider than /8 (IPv4) or /16 (IPv6)). Checked again at every delivery; suites stored before keep their URL.',
          params: ProjectParams,
          body: WebhookPolicy,
          response: { 200: WebhookPolicyView, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        },
      },
      async (req) => {
        const issues = policyIssues(req.body);
        if (issues.length > 0) throw errors.validation('webhook policy', issues);
        // Stored as given, names as written: a repeat of an entry is harmless, so it is not an error.
        const project = await setProjectWebhookPolicy(deps.db, req.params.name, req.body);
        if (!project) throw errors.notFound('project', req.params.name);
        return view(project);
      },
    );
  };
