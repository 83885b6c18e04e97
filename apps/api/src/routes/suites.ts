import type { FastifyRequest } from 'fastify';
import { withinDeadline } from '@erg/queue';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  createSuite, deleteSuite, findCampaign, findClusterByName, findSuiteByName, findSuiteRun, lastSuiteRuns, listClusters, listSuiteRuns,
  listSuites, projectWebhookPolicy, replaceSuite, type SuiteInput,
} from '@erg/db';
import { ErrorBody, NameParams, SuiteCreate, SuiteList, SuiteRunPage, SuiteRunView, SuiteView } from '@erg/spec';
import {
  applySchedule, removeSchedule, suiteRunView, suiteView, SuiteError, triggerSuite, validateSuite, validateSuiteText, webhookUrlIssues, type ValidSuite,
} from '@erg/suites';
import { REDACTED, redactSecrets } from '@erg/secrets';
import type { AppDeps } from '../app';
import { access, isVisible, requireRole, visibleProjects } from '../access';
import { errors } from '../errors';
import { BODY_LIMITS, OFFLOAD_ABOVE } from '../body-limits';
import { runSized, type Offload } from '../offload';
import { bodySize } from '../validation';
import { auditCreated } from '../audit';

const YAML_TYPES = /^(application\/(x-)?yaml|text\/yaml)\b/;

const SuiteRunParams = NameParams.extend({ runId: z.uuid({ error: 'not a suite run id (expected a UUID)' }) });

export const suiteRoutes =
  (deps: AppDeps & { offload: Offload }): FastifyPluginAsyncZod =>
  async (app) => {
    const limits = () => ({ maxRuns: deps.config.ERG_MAX_RUNS });

    /**
     * The body as YAML or JSON, validated with every issue at once (in a worker thread when it is
     * large; the caller's role was checked before it was read); then the references it makes.
     */
    async function suiteInput(req: FastifyRequest): Promise<{ valid: ValidSuite; input: SuiteInput }> {
      const identity = req.identity!;
      const body: unknown = req.body;
      const isYaml = YAML_TYPES.test(req.headers['content-type'] ?? '');
      const result = await runSized(deps.offload, { kind: 'suite', body, yaml: isYaml, limits: limits() }, bodySize(req), isYaml ? OFFLOAD_ABOVE.yaml : OFFLOAD_ABOVE.json, 'suite', () =>
        isYaml ? validateSuiteText(body as string, 'yaml', limits()) : validateSuite(body, limits()),
      );
      if (!result.ok) throw errors.validation('suite', result.issues);
      const { fields, spec } = result.suite;
      // A suite lives in its cluster's project; a cluster the caller cannot see is "not registered".
      const cluster = await findClusterByName(deps.db, spec.cluster!);
      if (!cluster || !isVisible(identity, cluster.projectId)) {
        const known = (await listClusters(deps.db, visibleProjects(identity))).map((c) => c.name);
        throw errors.unknownCluster(spec.cluster!, known, 'campaign.cluster');
      }
      requireRole(identity, cluster.projectId, 'maintainer', { kind: 'cluster', name: cluster.name });
      // What the project's webhook policy lets through without DNS (scheme, a literal address);
      // every delivery checks again, on the addresses the name resolves to then.
      if (fields.webhook) {
        const urlIssues = webhookUrlIssues(fields.webhook.url, await projectWebhookPolicy(deps.db, cluster.projectId));
        if (urlIssues.length > 0) throw errors.validation('suite', urlIssues);
      }
      const baseline = fields.baseline;
      const pinned = baseline.policy === 'pinned' ? await findCampaign(deps.db, baseline.campaignId) : null;
      if (baseline.policy === 'pinned' && (!pinned || pinned.projectId !== cluster.projectId)) {
        throw errors.unknownBaselineCampaign(baseline.campaignId);
      }
      // Printed only now that it is validated: its depth and size are bounded.
      const textOfCampaign = isYaml ? (body as string) : JSON.stringify((body as { campaign?: unknown }).campaign, null, 2);
      return {
        valid: result.suite,
        input: {
          name: fields.name,
          projectId: cluster.projectId,
          description: fields.description ?? null,
          template: spec,
          // A YAML body is the whole suite, webhook secret included: that text becomes its campaigns' spec text.
          templateText: isYaml ? withoutSecret(result.suite.textWithoutSecret ?? (body as string), fields.webhook?.secret) : textOfCampaign,
          cron: fields.schedule?.cron ?? null,
          timezone: fields.schedule?.timezone ?? 'UTC',
          baselinePolicy: baseline.policy,
          baselineCampaignId: baseline.policy === 'pinned' ? baseline.campaignId : null,
          policy: fields.regression,
          webhookUrl: fields.webhook?.url ?? null,
          webhookSecret: fields.webhook?.secret ?? null,
        },
      };
    }

    async function viewOf(name: string) {
      const suite = await findSuiteByName(deps.db, name);
      if (!suite) throw errors.notFound('suite', name);
      const last = await lastSuiteRuns(deps.db, [suite.id]);
      return { suite, view: suiteView(suite, last.get(suite.id) ?? null) };
    }

    const bodyDoc = {
      description:
        'A suite: a campaign template, an optional cron schedule (time zone aware), a baseline policy (`last-passing` or a pinned campaign), ' +
        'the regression policy and an optional webhook. JSON, or YAML with Content-Type: application/yaml.',
      body: SuiteCreate,
    };
    // Suites are validated in validateSuite (YAML and JSON alike, with the campaign size limit).
    const acceptAnyBody = () => (value: unknown) => ({ value });

    app.post(
      '/suites',
      {
        config: access.create('suite.manage'),
        bodyLimit: BODY_LIMITS.spec,
        schema: { tags: ['suites'], ...bodyDoc, response: { 201: SuiteView, 400: ErrorBody, 403: ErrorBody, 409: ErrorBody, 422: ErrorBody } },
        validatorCompiler: acceptAnyBody,
      },
      async (req, reply) => {
        const { input } = await suiteInput(req);
        if (await findSuiteByName(deps.db, input.name)) throw errors.conflict(`suite "${input.name}" already exists; replace it with PUT /v1/suites/${input.name}`);
        const suite = await createSuite(deps.db, input, deps.secrets);
        auditCreated(req, suite.name);
        await scheduleHint(applySchedule(deps.queue, suite), req.log);
        return reply.status(201).send(suiteView(suite, null));
      },
    );

    app.put(
      '/suites/:name',
      {
        // It creates the suite when there is none: callers without the role anywhere are refused before the body is read.
        config: access.suite('suite.manage', { upsert: true }),
        bodyLimit: BODY_LIMITS.spec,
        schema: {
          tags: ['suites'],
          ...bodyDoc,
          description: `Create or replace a suite (idempotent; what "suite as code" in CI calls). ${bodyDoc.description}`,
          params: NameParams,
          response: { 200: SuiteView, 201: SuiteView, 400: ErrorBody, 422: ErrorBody },
        },
        // Also skips the path's validation, so the name is checked below.
        validatorCompiler: acceptAnyBody,
      },
      async (req, reply) => {
        const params = NameParams.safeParse(req.params);
        if (!params.success) throw errors.validation('path', [{ path: 'name', code: 'invalid_format', message: 'use 1-63 lower-case letters, digits and -, starting with a letter or digit' }]);
        const name = params.data.name;
        const { input } = await suiteInput(req);
        if (input.name !== name) {
          throw errors.validation('suite', [{ path: 'name', code: 'invalid_value', message: `must be "${name}", the name in the path` }]);
        }
        const replaced = await replaceSuite(deps.db, name, input, deps.secrets);
        const suite = replaced ?? (await createSuite(deps.db, input, deps.secrets));
        await scheduleHint(applySchedule(deps.queue, suite), req.log);
        const last = await lastSuiteRuns(deps.db, [suite.id]);
        return reply.status(replaced ? 200 : 201).send(suiteView(suite, last.get(suite.id) ?? null));
      },
    );

    app.get('/suites', { config: access.listing('suite.read'), schema: { tags: ['suites'], response: { 200: SuiteList } } }, async (req) => {
      const suites = await listSuites(deps.db, visibleProjects(req.identity!));
      const last = await lastSuiteRuns(deps.db, suites.map((s) => s.id));
      return { items: suites.map((s) => suiteView(s, last.get(s.id) ?? null)) };
    });

    app.get('/suites/:name', { config: access.suite('suite.read'), schema: { tags: ['suites'], params: NameParams, response: { 200: SuiteView, 404: ErrorBody } } }, async (req) => {
      return (await viewOf(req.params.name)).view;
    });

    app.delete(
      '/suites/:name',
      { config: access.suite('suite.manage'), bodyLimit: BODY_LIMITS.action, schema: { tags: ['suites'], description: 'Deletes the suite and its schedule; the campaigns it ran stay.', params: NameParams, response: { 204: z.null(), 404: ErrorBody } } },
      async (req, reply) => {
        const deleted = await deleteSuite(deps.db, req.params.name);
        if (!deleted) throw errors.notFound('suite', req.params.name);
        await scheduleHint(removeSchedule(deps.queue, deleted.id), req.log);
        return reply.status(204).send(null);
      },
    );

    app.post(
      '/suites/:name/trigger',
      {
        config: access.suite('suite.trigger'),
        bodyLimit: BODY_LIMITS.action,
        schema: {
          tags: ['suites'],
          description:
            'Starts a run of the suite now (what CI calls): a new campaign from the template, judged against the baseline when it finishes. ' +
            'Send an Idempotency-Key header to make retries of the same request return the same run (200) instead of starting another (201).',
          params: NameParams,
          headers: z.object({ 'idempotency-key': z.string().min(1).max(200).optional() }),
          response: { 200: SuiteRunView, 201: SuiteRunView, 404: ErrorBody, 422: ErrorBody },
        },
      },
      async (req, reply) => {
        const suite = await findSuiteByName(deps.db, req.params.name);
        if (!suite) throw errors.notFound('suite', req.params.name);
        const key = req.headers['idempotency-key'];
        try {
          const { run, created } = await triggerSuite(
            { db: deps.db, queue: deps.queue, limits: limits() },
            suite,
            { trigger: 'manual', key: key ? `manual:${suite.id}:${key}` : null },
          );
          return reply.status(created ? 201 : 200).send(await suiteRunView(deps.db, run, suite.name));
        } catch (err) {
          if (err instanceof SuiteError) throw errors.suiteRefused(err);
          throw err;
        }
      },
    );

    app.get(
      '/suites/:name/runs',
      {
        config: access.suite('suite.read'),
        schema: {
          tags: ['suites'],
          description: 'The suite\'s runs, newest first, each with its campaign, baseline, status and verdict.',
          params: NameParams,
          querystring: z.object({ limit: z.coerce.number().int().min(1).max(200).default(20), offset: z.coerce.number().int().min(0).default(0) }),
          response: { 200: SuiteRunPage, 404: ErrorBody },
        },
      },
      async (req) => {
        const suite = await findSuiteByName(deps.db, req.params.name);
        if (!suite) throw errors.notFound('suite', req.params.name);
        const page = await listSuiteRuns(deps.db, suite.id, req.query);
        return { items: await Promise.all(page.items.map((r) => suiteRunView(deps.db, r, suite.name))), total: page.total };
      },
    );

    app.get(
      '/suites/:name/runs/:runId',
      { config: access.suite('suite.read'), schema: { tags: ['suites'], params: SuiteRunParams, response: { 200: SuiteRunView, 404: ErrorBody } } },
      async (req) => {
        const suite = await findSuiteByName(deps.db, req.params.name);
        if (!suite) throw errors.notFound('suite', req.params.name);
        const run = await findSuiteRun(deps.db, req.params.runId);
        if (!run || run.suiteId !== suite.id) throw errors.notFound('suite run', req.params.runId);
        return suiteRunView(deps.db, run, suite.name);
      },
    );
  };

/**
 * The suite's text with its webhook secret (and anything else that looks like a secret) redacted.
 * `text` comes with the secret already cut from the parsed YAML (validateSuiteText, in whatever
 * form it was written); here go any copies left in plain sight (a comment), then the patterns of
 * redactSecrets.
 */
function withoutSecret(text: string, secret: string | undefined): string {
  return redactSecrets(secret ? text.split(secret).join(REDACTED) : text);
}

/**
 * Applies a suite's cron schedule to Redis without waiting on a Redis that is away: Postgres holds
 * the suite, and every scheduler re-applies all schedules from it (every ERG_SUITE_SYNC_INTERVAL_MS,
 * and at once when it finds Redis emptied), so a schedule that could not be written now still takes effect.
 */
async function scheduleHint(work: Promise<void>, log: { warn: (o: object, m: string) => void }): Promise<void> {
  try {
    await withinDeadline(work);
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'could not update the suite schedule in Redis; the scheduler re-applies it from Postgres');
  }
}
