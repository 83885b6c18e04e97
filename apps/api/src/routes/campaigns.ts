import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { CampaignCursor } from '@erg/db';
import {
  ProjectQuery, CampaignCancelled, CampaignDecisions, CampaignCreated, CampaignDetail, CampaignResults, CampaignVerdictView, CampaignView, ConfigurationPage, CampaignSpec, CampaignPage, ErrorBody, EvidenceBundleBody, IdParams,
  ObjectivesQuery, RunSummaryPage, RunState,
} from '@erg/spec';
import type { AppDeps, ExpensiveReadDeps } from '../app';
import { access, seesClusterFailures } from '../access';
import { errors } from '../errors';
import { BODY_LIMITS } from '../body-limits';
import type { Offload } from '../offload';
import { specBody } from '../validation';
import { auditCreated } from '../audit';
import { campaignView, runSummaryView } from '../views';
import { BackgroundWork } from '../background';
import { JSON_SLICE_ITEMS, jsonObjectStream, streamedArray } from '../json-stream';
import { bundleFileName } from '@erg/evidence/layout';
import { exportCampaign } from '../services/evidence';
import {
  campaignConfigurations, campaignDecisions, campaignRuns, campaignSummary, cancelCampaign, createCampaignFromSpec, judgeCampaign, listVisibleCampaigns,
} from '../services/campaigns';

/** Page cursors are opaque to clients: base64url of "<createdAt ISO>|<id>". */
function encodeCursor(c: CampaignCursor): string {
  return Buffer.from(`${c.createdAt.toISOString()}|${c.id}`).toString('base64url');
}

function decodeCursor(cursor: string | undefined): CampaignCursor | undefined {
  if (cursor === undefined) return undefined;
  const [iso, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(iso ?? '');
  if (!id || !/^[0-9a-f-]{36}$/.test(id) || Number.isNaN(createdAt.getTime())) {
    throw errors.validation('request querystring', [{ path: 'cursor', code: 'invalid_cursor', message: 'not a cursor returned by this API; pass the `next` of the previous page' }]);
  }
  return { createdAt, id };
}

/** Who holds a request's expensive-read place: its token (a run token: its run). */
function holderOf(req: FastifyRequest): string {
  return req.identity?.id ?? (req.runTokenFor ? `run:${req.runTokenFor}` : (req.tokenName ?? 'anonymous'));
}

export const campaignRoutes =
  (deps: AppDeps & { offload: Offload } & ExpensiveReadDeps): FastifyPluginAsyncZod =>
  async (app) => {
    app.post(
      '/campaigns',
      {
        schema: {
          tags: ['campaigns'],
          description:
            'Create a campaign from a spec sent as JSON, or as YAML with Content-Type: application/yaml. It belongs to the project of its ' +
            'cluster (you need the researcher role there); an import campaign goes to `?project=`.',
          querystring: ProjectQuery,
          body: CampaignSpec,
          response: { 201: CampaignCreated, 400: ErrorBody, 403: ErrorBody, 409: ErrorBody, 422: ErrorBody },
        },
        config: access.create('campaign.submit'),
        bodyLimit: BODY_LIMITS.spec,
        // The spec is validated by the service (validateCampaignBody), together with the campaign
        // size limit, so that YAML and JSON bodies get the same error report.
        validatorCompiler: () => (value) => ({ value }),
      },
      async (req, reply) => {
        const { created, summary } = await createCampaignFromSpec(
          deps, req.identity!, { body: specBody(req), project: (req.query as { project?: string }).project }, req.log,
        );
        auditCreated(req, created.id);
        const configurationView = ({ key, parameters }: (typeof created.configurations)[number]) => ({ key, parameters });
        const runView = ({ id, configurationKey, repetition }: (typeof created.runs)[number]) => ({ id, configurationKey, repetition });
        if (created.runs.length <= JSON_SLICE_ITEMS) {
          return reply.status(201).send({ ...campaignView(summary), configurations: created.configurations.map(configurationView), runs: created.runs.map(runView) });
        }
        // A large answer (12 MB for 100,000 runs) is streamed a slice at a time: checked against
        // its schema and serialised whole, it held the event loop for 0.1-0.3 s. Its head is
        // checked as the schema would; the items are the rows just stored.
        const stream = jsonObjectStream(z.encode(CampaignView, campaignView(summary)), [
          streamedArray('configurations', created.configurations, configurationView),
          streamedArray('runs', created.runs, runView),
        ]);
        return reply.status(201).type('application/json; charset=utf-8').send(stream as never);
      },
    );

    app.get(
      '/campaigns',
      {
        config: access.listing('campaign.read'),
        schema: {
          tags: ['campaigns'],
          querystring: z.object({
            limit: z.coerce.number().int().min(1).max(500).default(50),
            cursor: z.string().max(200).optional().describe('the `next` of the previous page'),
          }),
          response: { 200: CampaignPage, 400: ErrorBody },
        },
      },
      async (req) => {
        const page = await listVisibleCampaigns(deps.db, req.identity!, { limit: req.query.limit, after: decodeCursor(req.query.cursor) });
        return { items: page.items.map(campaignView), next: page.next ? encodeCursor(page.next) : null };
      },
    );

    app.get(
      '/campaigns/:id',
      { config: access.campaign('campaign.read'), schema: { tags: ['campaigns'], params: IdParams, response: { 200: CampaignDetail, 404: ErrorBody } } },
      async (req) => {
        const summary = await campaignSummary(deps.db, req.params.id);
        return { ...campaignView(summary), spec: summary.campaign.spec };
      },
    );

    app.get(
      '/campaigns/:id/runs',
      {
        config: access.campaign('campaign.read'),
        schema: {
          tags: ['campaigns'],
          params: IdParams,
          querystring: z.object({
            state: RunState.optional(),
            limit: z.coerce.number().int().min(1).max(10_000).default(1000),
            offset: z.coerce.number().int().min(0).default(0),
          }),
          response: { 200: RunSummaryPage, 404: ErrorBody },
        },
      },
      async (req) => {
        const { campaign, items, total } = await campaignRuns(deps.db, req.params.id, req.query);
        const detail = campaign.cluster !== null && seesClusterFailures(req.identity!, campaign.cluster.projectId);
        return { items: items.map((r) => runSummaryView(r, campaign.cluster, detail)), total };
      },
    );

    app.get(
      '/campaigns/:id/decisions',
      {
        config: access.campaign('campaign.read'),
        schema: {
          tags: ['campaigns'],
          description:
            "An adaptive campaign's decisions (issue 16): per configuration whether it is still sampling, dropped (dominated with confidence, by which, p), settled on the front, " +
            'precise or exhausted, with the reason; the runs used against the full grid at maxRepetitions, what is undecided and the budget left. A grid campaign answers with its strategy and no decisions.',
          params: IdParams,
          response: { 200: CampaignDecisions, 404: ErrorBody },
        },
      },
      async (req) => campaignDecisions(deps.db, req.params.id),
    );

    app.get(
      '/campaigns/:id/results',
      {
        config: access.campaign('campaign.read'),
        schema: {
          tags: ['campaigns'],
          description:
            'Per configuration: n and { mean, std, ci95, cv } of time, energy, EDP, ED²P, average power and every metric over its completed runs; ' +
            'the Pareto front on (mean time, mean energy); the runtime-, energy- and EDP-optimal configurations; the trade-off between the fastest and the most frugal; ' +
            'how many kinds of machine (fingerprint classes) each configuration ran on and how they differ; carbon (gCO2e) and cost per configuration. ' +
            '`?groupBy=fingerprint` gives one entry per configuration and kind of machine; `?objectives=time,carbon` decides the Pareto front on two other objectives ' +
            '(any two of time, energy, edp, carbon, cost; default time,energy). `validity` says whether the results are publishable (every counted run passed ' +
            "the spec's validity gates); `?valid=only` leaves invalid runs out of every figure (listed in runsLeftOut with their reasons), as the spec's validity.excludeInvalid does. " +
            "A search campaign's candidates without a completed run are counted in `unmeasured`, not listed (GET /v1/campaigns/{id}/configurations?measured=false pages through them). " +
            'Computed in a worker thread and kept until anything they depend on changes; at most ERG_EXPENSIVE_READS_PER_TOKEN computations (and evidence bundles) per token at once (429 beyond).',
          params: IdParams,
          querystring: z.object({
            groupBy: z.enum(['configuration', 'fingerprint']).default('configuration').describe('fingerprint: split each configuration by the kind of machine its runs ran on'),
            objectives: ObjectivesQuery,
            valid: z.enum(['all', 'only']).default('all').describe('only: leave runs that failed a validity gate out of the figures (validity.excluded counts them)'),
          }),
          response: { 200: CampaignResults, 400: ErrorBody, 404: ErrorBody, 422: ErrorBody, 429: ErrorBody, 503: ErrorBody },
        },
      },
      async (req, reply) => {
        const options = { groupBy: req.query.groupBy, objectives: req.query.objectives, validOnly: req.query.valid === 'only' };
        // Bytes of the CampaignResults schema's JSON, checked and serialised where they were computed
        // (results-answer.ts); sent as they are (the response schema's serializer skips a Buffer).
        const { body } = await deps.results.read(req.params.id, options, holderOf(req));
        return reply.type('application/json; charset=utf-8').send(body as never);
      },
    );

    app.get(
      '/campaigns/:id/configurations',
      {
        config: access.campaign('campaign.read'),
        schema: {
          tags: ['campaigns'],
          description:
            "A page of the campaign's configurations in their listed order, each with its completed runs; `?measured=false`: only those without a completed run " +
            "(a search campaign's untried candidates, which its results count but do not list), `true`: only those with one.",
          params: IdParams,
          querystring: z.object({
            measured: z.enum(['true', 'false']).optional().describe('false: only configurations without a completed run; true: only those with one; absent: all'),
            limit: z.coerce.number().int().min(1).max(10_000).default(1000),
            offset: z.coerce.number().int().min(0).default(0),
          }),
          response: { 200: ConfigurationPage, 404: ErrorBody },
        },
      },
      async (req) => {
        const { measured, limit, offset } = req.query;
        return campaignConfigurations(deps.db, req.params.id, { measured: measured === undefined ? undefined : measured === 'true', limit, offset });
      },
    );

    /** Evidence bundles being written by this process (ERG_EXPORTS_AT_ONCE at most). */
    let exporting = 0;
    app.get(
      '/campaigns/:id/export',
      {
        config: access.campaign('campaign.read'),
        schema: {
          tags: ['campaigns'],
          description:
            "The campaign's evidence bundle, one tar archive (docs/experiments.md, \"Evidence bundle\"): the spec as submitted and as stored, every run with its " +
            'events, fingerprints, power records, figure inputs, samples per node (CSV.gz) and marks, its stored figures, every sample again as samples.parquet, ' +
            'the results (results.json: the bytes GET /v1/campaigns/{id}/results answers, computed as it computes them, 422 and 503 as it does), and manifest.json with the sha256 of every file. `erg verify` recomputes every figure from it offline. Streamed a run at a time; ' +
            'at most ERG_EXPORTS_AT_ONCE bundles are written at once, and ERG_EXPENSIVE_READS_PER_TOKEN per token together with results computations (429 with Retry-After beyond). ' +
            'A bundle cut short (an error while writing) has no manifest.json.',
          params: IdParams,
          response: {
            200: { description: 'the evidence bundle (a tar archive)', content: { 'application/x-tar': { schema: EvidenceBundleBody } } },
            404: ErrorBody,
            422: ErrorBody,
            429: ErrorBody,
            503: ErrorBody,
          },
        },
      },
      async (req, reply) => {
        const limit = deps.config.ERG_EXPORTS_AT_ONCE;
        if (exporting >= limit) throw errors.exportsBusy(limit);
        const release = deps.places.tryAcquire(holderOf(req));
        if (!release) throw errors.expensiveReadsBusy(deps.places.perHolder);
        exporting++;
        const done = () => {
          exporting--;
          release();
        };
        let bundle;
        try {
          const tmpDir = deps.config.ERG_EXPORT_TMP_DIR;
          bundle = await exportCampaign(deps, req.params.id, { holder: holderOf(req), ...(tmpDir === undefined ? {} : { tmpDir }) });
        } catch (err) {
          done();
          throw err;
        }
        // Its places are held until the last byte is sent, or the client goes away.
        bundle.once('close', done);
        bundle.once('error', (err) => req.log.error({ err, campaignId: req.params.id }, 'writing the evidence bundle failed; the archive was cut short'));
        return reply
          .type('application/x-tar')
          .header('content-disposition', `attachment; filename="${bundleFileName(req.params.id)}"`)
          .send(bundle as never);
      },
    );

    app.get(
      '/campaigns/:id/verdict',
      {
        config: access.campaign('campaign.read'),
        schema: {
          tags: ['campaigns'],
          description:
            'Regression verdict against a baseline campaign: per configuration, time and energy judged with Welch\'s t-test on the ' +
            'repetitions and a practical threshold (regressed = slower or costlier by more than `threshold` at one-sided p < `alpha`); ' +
            'then pass / regressed / improved / inconclusive for the campaign. For a campaign a suite started, `baseline` and the ' +
            'policy default to that suite run\'s baseline and the suite\'s regression policy.',
          params: IdParams,
          querystring: z.object({
            baseline: z.uuid({ error: 'the id of the campaign to compare against' }).optional(),
            threshold: z.coerce.number().min(0).max(10).optional().describe('relative change that counts, e.g. 0.05 = 5 % (default 0.05)'),
            alpha: z.coerce.number().gt(0).lt(1).optional().describe('default 0.05'),
            minRepetitions: z.coerce.number().int().min(2).max(1000).optional().describe('default 3'),
            maxCv: z.coerce.number().gt(0).max(10).optional().describe('default 0.25'),
          }),
          response: { 200: CampaignVerdictView, 400: ErrorBody, 404: ErrorBody },
        },
      },
      async (req) => judgeCampaign(deps.db, req.identity!, req.params.id, req.query),
    );

    /** Pending runs of large cancelled campaigns, cancelled after the answer; closing the app waits for them. */
    const background = new BackgroundWork();
    app.addHook('onClose', () => background.drain());

    app.post(
      '/campaigns/:id/cancel',
      {
        config: access.campaign('campaign.cancel', { ownerMay: 'researcher' }),
        bodyLimit: BODY_LIMITS.action,
        schema: {
          tags: ['campaigns'],
          description:
            'Cancels a campaign: its pending runs are cancelled by erg (before the answer, or right after it when there are more than ' +
            'ERG_CANCEL_INLINE_RUNS), the Slurm jobs of its active runs by the scheduler on its next cycle. `cancelling` says how many of each.',
          params: IdParams,
          response: { 202: CampaignCancelled, 404: ErrorBody },
        },
      },
      async (req, reply) => {
        const { summary, cancelling } = await cancelCampaign(deps, req.params.id, background, req.log);
        return reply.status(202).send({ ...campaignView(summary), cancelling });
      },
    );
  };
