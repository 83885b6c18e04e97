import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  cancelPendingRuns, createCampaign, findCampaignRef, findClusterByName, findSuiteRunBaseline, type CampaignCursor, getCampaignSummary,
  listCampaignRuns, listCampaignSummaries, listClusters, requestCampaignCancel,
} from '@erg/db';
import {
  ProjectQuery, CampaignCancelled, CampaignDecisions, CampaignCreated, CampaignDetail, CampaignResults, CampaignVerdictView, CampaignView, ConfigurationResult, Exclusion, RegressionPolicy, CampaignSpec, CampaignPage, ErrorBody, IdParams,
  ObjectivesQuery, RunLeftOut, RunSummaryPage, RunState, decodeCampaignText, initialRuns, parseCampaignSpec, powerSupport,
} from '@erg/spec';
import { campaignDecisionsView, campaignResultsView, campaignVerdictView } from '@erg/results';
import { measureCampaign, validateCampaign, validateCampaignText, type SizeLimits } from '@erg/sweep';
import type { AppDeps } from '../app';
import { access, chooseProject, isVisible, requireRole, visibleProjects } from '../access';
import { errors } from '../errors';
import { BODY_LIMITS, OFFLOAD_ABOVE } from '../body-limits';
import { runSized, type Offload } from '../offload';
import { bodySize } from '../validation';
import { auditCreated } from '../audit';
import { campaignView, runSummaryView } from '../views';
import { BackgroundWork } from '../background';
import { wakeScheduler } from '../wake-scheduler';
import { JSON_SLICE_ITEMS, jsonObjectStream, streamedArray } from '../json-stream';

/** Configuration results per slice of a streamed results answer: each is about 1.4 KB of JSON. */
const RESULTS_SLICE_ITEMS = 250;

/** Retry-After of a 409 for a cluster not probed yet: the scheduler reaches a new cluster within a cycle or two. */
const PROBE_RETRY_AFTER_S = 5;

const YAML_TYPES = /^(application\/(x-)?yaml|text\/yaml)\b/;

/**
 * Above this many configurations a spec is validated in a worker thread however short its text:
 * expanding it and checking every configuration costs 1-2 µs a configuration on the event loop
 * (50,000 configurations: 0.1-0.2 s).
 */
export const OFFLOAD_ABOVE_CONFIGURATIONS = 10_000;

/**
 * Whether a spec expands to more than OFFLOAD_ABOVE_CONFIGURATIONS configurations, counted without
 * expanding them (the count has a step budget). Only for specs short enough to decode and parse
 * inline; false for one with errors, which the inline validation reports as quickly.
 */
function expandsLarge(body: unknown, yaml: boolean, limits: SizeLimits): boolean {
  const decoded = yaml ? decodeCampaignText(body as string, 'yaml') : { ok: true as const, raw: body };
  if (!decoded.ok) return false;
  const parsed = parseCampaignSpec(decoded.raw);
  if (!parsed.ok) return false;
  const size = measureCampaign(parsed.spec, limits);
  return size.ok && size.configurations > OFFLOAD_ABOVE_CONFIGURATIONS;
}

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

export const campaignRoutes =
  (deps: AppDeps & { offload: Offload }): FastifyPluginAsyncZod =>
  async (app) => {
    /** Wakes the scheduler for a cluster. Best effort: its periodic tick finds the work anyway. */
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
        // The spec is validated below, together with the campaign size limit, so that YAML and
        // JSON bodies get the same error report.
        validatorCompiler: () => (value) => ({ value }),
      },
      async (req, reply) => {
        // The caller's role was checked before the body was read (access.ts); validation is
        // bounded by the spec's limits, and a large body is validated in a worker thread.
        const limits = { maxRuns: deps.config.ERG_MAX_RUNS };
        const isYaml = YAML_TYPES.test(req.headers['content-type'] ?? '');
        const body: unknown = req.body;
        const above = isYaml ? OFFLOAD_ABOVE.yaml : OFFLOAD_ABOVE.json;
        // A short spec that expands to a large campaign is validated in the worker as a large body is.
        const bytes = bodySize(req) <= above && deps.offload.available && expandsLarge(body, isYaml, limits) ? Number.POSITIVE_INFINITY : bodySize(req);
        const result = await runSized(deps.offload, { kind: 'campaign', body, yaml: isYaml, limits }, bytes, above, 'campaign spec', () =>
          isYaml ? validateCampaignText(body as string, 'yaml', limits) : validateCampaign(body, limits),
        );
        if (!result.ok) throw errors.validation('campaign spec', result.issues);
        const { spec, configurations } = result;
        // Only a validated spec is printed: its depth and size are bounded by now.
        const specText = isYaml ? (body as string) : JSON.stringify(body, null, 2);

        const identity = req.identity!;
        let clusterId: string | null = null;
        let projectId: string;
        if (spec.execution === 'slurm') {
          // The spec schema requires `cluster` for execution: slurm. A cluster of a project the
          // caller cannot see is "not registered", as one that does not exist.
          const cluster = await findClusterByName(deps.db, spec.cluster!);
          if (!cluster || !isVisible(identity, cluster.projectId)) {
            throw errors.unknownCluster(spec.cluster!, (await listClusters(deps.db, visibleProjects(identity))).map((c) => c.name));
          }
          requireRole(identity, cluster.projectId, 'researcher', { kind: 'cluster', name: cluster.name });
          // A power state the cluster cannot set is refused now, never run at the nodes' own state.
          if (spec.power) {
            const support = powerSupport(cluster, spec.power);
            if (!support.ok && support.unknown) {
              reply.header('retry-after', String(PROBE_RETRY_AFTER_S));
              throw errors.clusterNotProbed(cluster.name);
            }
            if (!support.ok) throw errors.powerUnsupported(support.message);
          }
          clusterId = cluster.id;
          projectId = cluster.projectId;
        } else {
          projectId = await chooseProject(deps.db, identity, (req.query as { project?: string }).project, 'researcher');
          // An import's cluster is where the measurements were taken: its carbon and price settings
          // apply to the runs' figures. It must be one the caller can see; the campaign is still
          // bound to no cluster (never submitted).
          if (spec.cluster !== undefined) {
            const cluster = await findClusterByName(deps.db, spec.cluster);
            if (!cluster || !isVisible(identity, cluster.projectId)) {
              throw errors.unknownCluster(spec.cluster, (await listClusters(deps.db, visibleProjects(identity))).map((c) => c.name));
            }
          }
        }
        // Import campaigns are never submitted: their runs wait for telemetry and POST /v1/runs/:id/finish.
        const created = await createCampaign(deps.db, {
          name: spec.name, execution: spec.execution, clusterId, spec, specText, createdBy: req.tokenName ?? null,
          projectId, createdByUserId: identity.userId,
          configurations, ...initialRuns(spec),
        });
        if (clusterId) await wakeScheduler(deps, clusterId, 'campaign created', req.log);
        const summary = await getCampaignSummary(deps.db, created.id);
        auditCreated(req, created.id);
        const configurationView = ({ key, parameters }: (typeof created.configurations)[number]) => ({ key, parameters });
        const runView = ({ id, configurationKey, repetition }: (typeof created.runs)[number]) => ({ id, configurationKey, repetition });
        if (created.runs.length <= JSON_SLICE_ITEMS) {
          return reply.status(201).send({ ...campaignView(summary!), configurations: created.configurations.map(configurationView), runs: created.runs.map(runView) });
        }
        // A large answer (12 MB for 100,000 runs) is streamed a slice at a time: checked against
        // its schema and serialised whole, it held the event loop for 0.1-0.3 s. Its head is
        // checked as the schema would; the items are the rows just stored.
        const stream = jsonObjectStream(z.encode(CampaignView, campaignView(summary!)), [
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
        const page = await listCampaignSummaries(deps.db, { limit: req.query.limit, after: decodeCursor(req.query.cursor), projectIds: visibleProjects(req.identity!) });
        return { items: page.items.map(campaignView), next: page.next ? encodeCursor(page.next) : null };
      },
    );

    app.get(
      '/campaigns/:id',
      { config: access.campaign('campaign.read'), schema: { tags: ['campaigns'], params: IdParams, response: { 200: CampaignDetail, 404: ErrorBody } } },
      async (req) => {
        const summary = await getCampaignSummary(deps.db, req.params.id);
        if (!summary) throw errors.notFound('campaign', req.params.id);
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
        const campaign = await findCampaignRef(deps.db, req.params.id);
        if (!campaign) throw errors.notFound('campaign', req.params.id);
        const { items, total } = await listCampaignRuns(deps.db, campaign.id, { state: req.query.state, limit: req.query.limit, offset: req.query.offset });
        return { items: items.map((r) => runSummaryView(r, campaign.cluster)), total };
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
      async (req) => {
        const campaign = await findCampaignRef(deps.db, req.params.id);
        if (!campaign) throw errors.notFound('campaign', req.params.id);
        const view = await campaignDecisionsView(deps.db, campaign.id);
        if (!view) throw errors.notFound('campaign', req.params.id);
        return view;
      },
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
            '(any two of time, energy, edp, carbon, cost; default time,energy).',
          params: IdParams,
          querystring: z.object({
            groupBy: z.enum(['configuration', 'fingerprint']).default('configuration').describe('fingerprint: split each configuration by the kind of machine its runs ran on'),
            objectives: ObjectivesQuery,
          }),
          response: { 200: CampaignResults, 400: ErrorBody, 404: ErrorBody },
        },
      },
      async (req, reply) => {
        const campaign = await findCampaignRef(deps.db, req.params.id);
        if (!campaign) throw errors.notFound('campaign', req.params.id);
        const results = { campaignId: campaign.id, ...(await campaignResultsView(deps.db, campaign.id, { groupBy: req.query.groupBy, objectives: req.query.objectives })) };
        if (results.configurations.length <= RESULTS_SLICE_ITEMS) return results;
        // Large results (14 MB for 10,000 configurations) are checked against their schema and
        // serialised a slice at a time, as the client reads, rather than whole on the event loop.
        const { configurations, excluded, runsLeftOut, ...head } = results;
        const stream = jsonObjectStream(z.encode(CampaignResults.omit({ configurations: true, excluded: true, runsLeftOut: true }), head), [
          streamedArray('configurations', configurations, (c) => z.encode(ConfigurationResult, c), RESULTS_SLICE_ITEMS),
          streamedArray('excluded', excluded, (e) => z.encode(Exclusion, e)),
          streamedArray('runsLeftOut', runsLeftOut, (r) => z.encode(RunLeftOut, r)),
        ]);
        return reply.type('application/json; charset=utf-8').send(stream as never);
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
      async (req) => {
        const { baseline, ...given } = req.query;
        const campaign = await findCampaignRef(deps.db, req.params.id);
        if (!campaign) throw errors.notFound('campaign', req.params.id);
        const suiteRun = await findSuiteRunBaseline(deps.db, campaign.id);
        const baselineId = baseline ?? suiteRun?.baselineCampaignId;
        if (!baselineId) {
          throw errors.validation('request querystring', [
            { path: 'baseline', code: 'required', message: 'required: the id of the campaign to compare against (only a suite run with a baseline has a default)' },
          ]);
        }
        const base = await findCampaignRef(deps.db, baselineId);
        if (!base || !isVisible(req.identity!, base.projectId)) throw errors.notFound('baseline campaign', baselineId);
        const defaults = suiteRun?.policy ?? RegressionPolicy.parse({});
        const policy = { ...defaults, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) };
        return campaignVerdictView(deps.db, campaign.id, base.id, policy);
      },
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
        const campaign = await findCampaignRef(deps.db, req.params.id);
        if (!campaign) throw errors.notFound('campaign', req.params.id);
        // One statement whatever the size: from here on no pending run of the campaign is claimed.
        const cancelling = await requestCampaignCancel(deps.db, campaign.id);
        const later = cancelling.pending > deps.config.ERG_CANCEL_INLINE_RUNS;
        if (cancelling.pending > 0 && !later) await cancelPendingRuns(deps.db, campaign.id);
        // Queued and running jobs are cancelled by the scheduler (scancel over SSH).
        if (campaign.clusterId) await wakeScheduler(deps, campaign.clusterId, 'campaign cancelled', req.log);
        const summary = (await getCampaignSummary(deps.db, campaign.id))!;
        if (later) {
          // A run and an event each: for thousands of runs that is seconds, not worth holding the answer for.
          background.start(
            () => cancelPendingRuns(deps.db, campaign.id),
            (err) => req.log.error({ err, campaignId: campaign.id }, 'cancelling the pending runs failed; they are not claimed, and cancelling the campaign again retries'),
          );
        }
        return reply.status(202).send({ ...campaignView(summary), cancelling });
      },
    );
  };
