import {
  cancelPendingRuns, createCampaign, findCampaignRef, findSuiteRunBaseline, getCampaignSummary, listCampaignConfigurations, listCampaignRuns, listCampaignSummaries, requestCampaignCancel,
  type CampaignCursor, type CampaignRef, type CampaignSummary, type CancelRequest, type ClusterRecord, type CreatedCampaign, type Database, type TokenIdentity,
} from '@erg/db';
import { decodeCampaignText, initialRuns, parseCampaignSpec, powerSupport, RegressionPolicy, type CampaignSpec, type RunState } from '@erg/spec';
import { campaignVerdictView } from '@erg/suites';
import { campaignDecisionsView } from '@erg/strategy';
import { measureCampaign, validateCampaign, validateCampaignText, type SizeLimits } from '@erg/sweep';
import type { AppDeps } from '../app';
import { chooseProject, isVisible, requireActive, requireRole, visibleProjects } from '../access';
import { errors } from '../errors';
import { OFFLOAD_ABOVE } from '../body-limits';
import { runSized, type Offload } from '../offload';
import type { SpecBody } from '../validation';
import type { BackgroundWork } from '../background';
import { wakeScheduler } from '../wake-scheduler';
import { findVisibleCluster } from './clusters';
import type { Log } from './log';

/**
 * Campaigns: creating one from a spec (validated, placed in its cluster's project or `?project=`,
 * its power state checked against the cluster, stored with its whole sweep, the scheduler woken),
 * reading them, judging one against a baseline, and cancelling one. The routes
 * (routes/campaigns.ts) read the request and write the answer around these steps.
 */

type CampaignDeps = Pick<AppDeps, 'db' | 'queue' | 'config'> & { offload: Offload };

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

/** A spec that may become a campaign: with its defaults, its configurations, and its text as it is stored. */
export interface ValidCampaign {
  spec: CampaignSpec;
  configurations: { key: string; parameters: Record<string, unknown> }[];
  specText: string;
}

/**
 * The spec's own rules and the campaign size limit, YAML and JSON alike, with every issue at once
 * (400). Bounded by the spec's limits; a large body, or a short one that expands to a large
 * campaign, is validated in a worker thread.
 */
export async function validateCampaignBody(deps: Pick<CampaignDeps, 'offload' | 'config'>, body: SpecBody): Promise<ValidCampaign> {
  const limits = { maxRuns: deps.config.ERG_MAX_RUNS };
  const { value, yaml } = body;
  const above = yaml ? OFFLOAD_ABOVE.yaml : OFFLOAD_ABOVE.json;
  const bytes = body.chars <= above && deps.offload.available && expandsLarge(value, yaml, limits) ? Number.POSITIVE_INFINITY : body.chars;
  const result = await runSized(deps.offload, { kind: 'campaign', body: value, yaml, limits }, bytes, above, 'campaign spec', () =>
    yaml ? validateCampaignText(value as string, 'yaml', limits) : validateCampaign(value, limits),
  );
  if (!result.ok) throw errors.validation('campaign spec', result.issues);
  // Only a validated spec is printed: its depth and size are bounded by now.
  return { spec: result.spec, configurations: result.configurations, specText: yaml ? (value as string) : JSON.stringify(value, null, 2) };
}

/** Where a new campaign belongs: the cluster it is submitted to (none for an import) and its project. */
export interface CampaignHome {
  clusterId: string | null;
  projectId: string;
}

/**
 * A slurm campaign goes to its cluster's project, where the caller needs the researcher role; an
 * import campaign to `project` (or the caller's only project where they are a researcher). Neither
 * the project nor a slurm campaign's cluster may be deactivated (409).
 */
export async function chooseCampaignHome(db: Database, identity: TokenIdentity, spec: CampaignSpec, project: string | undefined): Promise<CampaignHome> {
  if (spec.execution === 'slurm') {
    // The spec schema requires `cluster` for execution: slurm.
    const cluster = await findVisibleCluster(db, identity, spec.cluster!);
    requireRole(identity, cluster.projectId, 'researcher', { kind: 'cluster', name: cluster.name });
    await requireActive(db, { projectId: cluster.projectId, clusterId: cluster.id });
    if (spec.power) requirePowerSupported(cluster, spec.power);
    return { clusterId: cluster.id, projectId: cluster.projectId };
  }
  const projectId = await chooseProject(db, identity, project, 'researcher');
  // An import's cluster is where the measurements were taken: its carbon and price settings apply
  // to the runs' figures. It must be one the caller can see; the campaign is still bound to no
  // cluster (never submitted).
  if (spec.cluster !== undefined) await findVisibleCluster(db, identity, spec.cluster);
  return { clusterId: null, projectId };
}

/**
 * A power state the cluster cannot set is refused now, never run at the nodes' own state; on a
 * cluster not probed yet, the answer is to retry shortly (409 with Retry-After).
 */
export function requirePowerSupported(cluster: ClusterRecord, power: NonNullable<CampaignSpec['power']>): void {
  const support = powerSupport(cluster, power);
  if (!support.ok && support.unknown) throw errors.clusterNotProbed(cluster.name);
  if (!support.ok) throw errors.powerUnsupported(support.message);
}

/** A campaign just created: its rows (for the answer, which lists them all) and its summary. */
export interface NewCampaign {
  created: CreatedCampaign;
  summary: CampaignSummary;
}

/**
 * Creates a campaign from a spec body: validated, placed (chooseCampaignHome), stored with its
 * whole sweep in one transaction, then the scheduler of its cluster woken. Import campaigns are
 * never submitted: their runs wait for telemetry and POST /v1/runs/:id/finish. The caller's role
 * in some project was checked before the body was read (access.ts).
 */
export async function createCampaignFromSpec(
  deps: CampaignDeps, identity: TokenIdentity, request: { body: SpecBody; project: string | undefined }, log: Log,
): Promise<NewCampaign> {
  const { spec, configurations, specText } = await validateCampaignBody(deps, request.body);
  const { clusterId, projectId } = await chooseCampaignHome(deps.db, identity, spec, request.project);
  const created = await createCampaign(deps.db, {
    name: spec.name, execution: spec.execution, clusterId, spec, specText,
    projectId, creator: { userId: identity.userId, tokenId: identity.id, tokenName: identity.name },
    configurations, ...initialRuns(spec),
  });
  if (clusterId) await wakeScheduler(deps, clusterId, 'campaign created', log);
  return { created, summary: (await getCampaignSummary(deps.db, created.id))! };
}

/** The campaign (who may see it was checked by the route's access rule). */
export async function campaignRef(db: Database, id: string): Promise<CampaignRef> {
  const campaign = await findCampaignRef(db, id);
  if (!campaign) throw errors.notFound('campaign', id);
  return campaign;
}

/** The campaign with its state and run counts. */
export async function campaignSummary(db: Database, id: string): Promise<CampaignSummary> {
  const summary = await getCampaignSummary(db, id);
  if (!summary) throw errors.notFound('campaign', id);
  return summary;
}

/** The campaigns of the caller's projects, newest first, a page at a time. */
export async function listVisibleCampaigns(db: Database, identity: TokenIdentity, page: { limit: number; after: CampaignCursor | undefined }) {
  return listCampaignSummaries(db, { limit: page.limit, after: page.after, projectIds: visibleProjects(identity) });
}

/** A page of the campaign's runs, with the campaign (its cluster explains why pending runs wait). */
export async function campaignRuns(db: Database, id: string, page: { state?: RunState | undefined; limit: number; offset: number }) {
  const campaign = await campaignRef(db, id);
  const { items, total } = await listCampaignRuns(db, campaign.id, { state: page.state, limit: page.limit, offset: page.offset });
  return { campaign, items, total };
}

/** An adaptive campaign's decisions per configuration (a grid campaign: its strategy and none). */
export async function campaignDecisions(db: Database, id: string) {
  const campaign = await campaignRef(db, id);
  const view = await campaignDecisionsView(db, campaign.id);
  if (!view) throw errors.notFound('campaign', id);
  return view;
}

/** The campaign's results per configuration (or per configuration and kind of machine), front and picks. */
/** A page of the campaign's configurations (listCampaignConfigurations): all, or those with or without a completed run. */
export async function campaignConfigurations(db: Database, id: string, page: { measured: boolean | undefined; limit: number; offset: number }) {
  const campaign = await campaignRef(db, id);
  return listCampaignConfigurations(db, campaign.id, page);
}

/** What a verdict is asked with: the baseline and the policy's fields to change; each defaults (see judgeCampaign). */
export interface VerdictRequest {
  baseline?: string | undefined;
  threshold?: number | undefined;
  alpha?: number | undefined;
  minRepetitions?: number | undefined;
  maxCv?: number | undefined;
}

/**
 * The campaign's regression verdict against a baseline campaign the caller can see. For a campaign
 * a suite started, the baseline and the policy default to that suite run's baseline and the
 * suite's regression policy; otherwise the baseline is required and the policy has its defaults.
 */
export async function judgeCampaign(db: Database, identity: TokenIdentity, id: string, request: VerdictRequest) {
  const { baseline, ...given } = request;
  const campaign = await campaignRef(db, id);
  const suiteRun = await findSuiteRunBaseline(db, campaign.id);
  const baselineId = baseline ?? suiteRun?.baselineCampaignId;
  if (!baselineId) {
    throw errors.validation('request querystring', [
      { path: 'baseline', code: 'required', message: 'required: the id of the campaign to compare against (only a suite run with a baseline has a default)' },
    ]);
  }
  const base = await findCampaignRef(db, baselineId);
  if (!base || !isVisible(identity, base.projectId)) throw errors.notFound('baseline campaign', baselineId);
  const defaults = suiteRun?.policy ?? RegressionPolicy.parse({});
  const policy = { ...defaults, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) };
  return campaignVerdictView(db, campaign.id, base.id, policy);
}

/** A campaign whose cancel was asked for, and how many runs it cancels (pending: erg; active: their Slurm jobs). */
export interface CancelledCampaign {
  summary: CampaignSummary;
  cancelling: CancelRequest;
}

/**
 * Cancels the campaign: from the first statement on no pending run of it is claimed. Its pending
 * runs are cancelled here, or, beyond ERG_CANCEL_INLINE_RUNS (a run and an event each: seconds for
 * thousands), in `background` once the answer is on its way; the Slurm jobs of its active runs by
 * the scheduler (scancel over SSH), woken for it.
 */
export async function cancelCampaign(deps: Pick<CampaignDeps, 'db' | 'queue' | 'config'>, id: string, background: BackgroundWork, log: Log): Promise<CancelledCampaign> {
  const campaign = await campaignRef(deps.db, id);
  // One statement whatever the size: from here on no pending run of the campaign is claimed.
  const cancelling = await requestCampaignCancel(deps.db, campaign.id);
  const later = cancelling.pending > deps.config.ERG_CANCEL_INLINE_RUNS;
  if (cancelling.pending > 0 && !later) await cancelPendingRuns(deps.db, campaign.id);
  // Queued and running jobs are cancelled by the scheduler (scancel over SSH).
  if (campaign.clusterId) await wakeScheduler(deps, campaign.clusterId, 'campaign cancelled', log);
  const summary = (await getCampaignSummary(deps.db, campaign.id))!;
  if (later) {
    background.start(
      () => cancelPendingRuns(deps.db, campaign.id),
      (err) => log.error({ err, campaignId: campaign.id }, 'cancelling the pending runs failed; they are not claimed, and cancelling the campaign again retries'),
    );
  }
  return { summary, cancelling };
}
