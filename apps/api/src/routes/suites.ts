import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorBody, NameParams, SuiteCreate, SuiteList, SuiteRunPage, SuiteRunView, SuiteView } from '@erg/spec';
import type { AppDeps } from '../app';
import { access } from '../access';
import { errors } from '../errors';
import { BODY_LIMITS } from '../body-limits';
import type { Offload } from '../offload';
import { specBody } from '../validation';
import { auditCreated } from '../audit';
import {
  createNewSuite, listVisibleSuites, putSuite, removeSuite, suiteNamed, suiteRun, suiteRuns, triggerSuiteNow, viewWithLastRun,
} from '../services/suites';

const SuiteRunParams = NameParams.extend({ runId: z.uuid({ error: 'not a suite run id (expected a UUID)' }) });

export const suiteRoutes =
  (deps: AppDeps & { offload: Offload }): FastifyPluginAsyncZod =>
  async (app) => {
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
        const suite = await createNewSuite(deps, req.identity!, specBody(req), req.log);
        auditCreated(req, suite.name);
        return reply.status(201).send(await viewWithLastRun(deps.db, suite));
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
        const { view, created } = await putSuite(deps, req.identity!, params.data.name, specBody(req), req.log);
        return reply.status(created ? 201 : 200).send(view);
      },
    );

    app.get('/suites', { config: access.listing('suite.read'), schema: { tags: ['suites'], response: { 200: SuiteList } } }, async (req) => {
      return { items: await listVisibleSuites(deps.db, req.identity!) };
    });

    app.get('/suites/:name', { config: access.suite('suite.read'), schema: { tags: ['suites'], params: NameParams, response: { 200: SuiteView, 404: ErrorBody } } }, async (req) => {
      return viewWithLastRun(deps.db, await suiteNamed(deps.db, req.params.name));
    });

    app.delete(
      '/suites/:name',
      { config: access.suite('suite.manage'), bodyLimit: BODY_LIMITS.action, schema: { tags: ['suites'], description: 'Deletes the suite and its schedule; the campaigns it ran stay.', params: NameParams, response: { 204: z.null(), 404: ErrorBody } } },
      async (req, reply) => {
        await removeSuite(deps, req.params.name, req.log);
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
        const { view, created } = await triggerSuiteNow(deps, req.params.name, req.headers['idempotency-key']);
        return reply.status(created ? 201 : 200).send(view);
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
      async (req) => suiteRuns(deps.db, req.params.name, req.query),
    );

    app.get(
      '/suites/:name/runs/:runId',
      { config: access.suite('suite.read'), schema: { tags: ['suites'], params: SuiteRunParams, response: { 200: SuiteRunView, 404: ErrorBody } } },
      async (req) => suiteRun(deps.db, req.params.name, req.params.runId),
    );
  };
