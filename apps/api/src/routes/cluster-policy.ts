import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { allowanceIssues } from '@erg/address-policy';
import { findProjectByName, readClusterPolicy, setProjectClusterPolicy, type ProjectRecord } from '@erg/db';
import { ClusterPolicy, ClusterPolicyView, ErrorBody } from '@erg/spec';
import type { AppDeps } from '../app';
import { access } from '../access';
import { errors } from '../errors';
import { BODY_LIMITS } from '../body-limits';

const ProjectParams = z.object({ name: z.string().min(1).max(63) });

const view = (project: ProjectRecord) => ({ project: project.name, ...readClusterPolicy(project.clusterPolicy) });

/**
 * Which internal hosts a project's clusters may be (see @erg/address-policy, and hop-chain.ts in
 * @erg/slurm for where it is checked): its members read it, to know which hosts a registration
 * will take; only admins change it, because it lets the project's maintainers point erg's SSH
 * connections into erg's own network — the same rule as the webhook policy's.
 */
export const clusterPolicyRoutes =
  (deps: AppDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      '/projects/:name/cluster-policy',
      {
        config: access.project('project.read'),
        schema: {
          tags: ['access'],
          description: "Which internal hosts the project's clusters may be (login nodes, or first jump hosts): public addresses only unless allowHosts lists the host.",
          params: ProjectParams,
          response: { 200: ClusterPolicyView, 404: ErrorBody },
        },
      },
      async (req) => {
        const project = await findProjectByName(deps.db, req.params.name);
        if (!project) throw errors.notFound('project', req.params.name);
        return view(project);
      },
    );

    app.put(
      '/projects/:name/cluster-policy',
      {
        config: access.project('network-policy.manage'),
        bodyLimit: BODY_LIMITS.action,
        schema: {
          tags: ['access'],
          description:
            "Admins only. Replaces the project's cluster policy: allowHosts, the internal hosts its clusters' login nodes (or first jump hosts) may be — " +
            'host names, *.suffixes, IP addresses, CIDR blocks no wider than /8 (IPv4) or /16 (IPv6). Checked at every connection, on the addresses a name resolves to then; ' +
            'clusters registered before keep their host, and one the policy no longer allows stops being reached.',
          params: ProjectParams,
          body: ClusterPolicy,
          response: { 200: ClusterPolicyView, 400: ErrorBody, 403: ErrorBody, 404: ErrorBody },
        },
      },
      async (req) => {
        const issues = allowanceIssues(req.body.allowHosts);
        if (issues.length > 0) throw errors.validation('cluster policy', issues);
        const project = await setProjectClusterPolicy(deps.db, req.params.name, req.body);
        if (!project) throw errors.notFound('project', req.params.name);
        return view(project);
      },
    );
  };
