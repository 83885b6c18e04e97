import { withinDeadline } from '@erg/queue';
import {
  createSuite, deleteSuite, findCampaign, findSuiteByName, findSuiteRun, lastSuiteRuns, listSuiteRuns, listSuites, projectWebhookPolicy, replaceSuite,
  type Database, type SuiteInput, type SuiteRecord, type SuiteRunRecord, type TokenIdentity,
} from '@erg/db';
import type { SuiteRunView, SuiteView } from '@erg/spec';
import {
  applySchedule, removeSchedule, suiteRunView, suiteView, SuiteError, triggerSuite, validateSuite, validateSuiteText, webhookUrlIssues,
} from '@erg/suites';
import { REDACTED, redactSecrets } from '@erg/secrets';
import type { AppDeps } from '../app';
import { requireActive, requireRole, visibleProjects } from '../access';
import { errors } from '../errors';
import { OFFLOAD_ABOVE } from '../body-limits';
import { runSized, type Offload } from '../offload';
import type { SpecBody } from '../validation';
import { findVisibleCluster } from './clusters';
import type { Log } from './log';

/**
 * Suites: a suite body read into what is stored (validated, placed in its cluster's project, its
 * webhook and pinned baseline checked), created or replaced with its cron schedule, read, deleted,
 * and triggered. The routes (routes/suites.ts) read the request and write the answer around these
 * steps.
 */

type SuiteDeps = Pick<AppDeps, 'db' | 'queue' | 'secrets' | 'config'> & { offload: Offload };

/**
 * The body as YAML or JSON, validated with every issue at once (in a worker thread when it is
 * large; the caller's role somewhere was checked before it was read); then the references it
 * makes: the cluster (the suite lives in its project, where the caller must be a maintainer), the
 * webhook against the project's policy, a pinned baseline in the same project.
 */
export async function suiteInput(deps: SuiteDeps, identity: TokenIdentity, body: SpecBody): Promise<SuiteInput> {
  const limits = { maxRuns: deps.config.ERG_MAX_RUNS };
  const { value, yaml } = body;
  const result = await runSized(deps.offload, { kind: 'suite', body: value, yaml, limits }, body.chars, yaml ? OFFLOAD_ABOVE.yaml : OFFLOAD_ABOVE.json, 'suite', () =>
    yaml ? validateSuiteText(value as string, 'yaml', limits) : validateSuite(value, limits),
  );
  if (!result.ok) throw errors.validation('suite', result.issues);
  const { fields, spec } = result.suite;
  // A suite lives in its cluster's project; a cluster the caller cannot see is "not registered".
  const cluster = await findVisibleCluster(deps.db, identity, spec.cluster!, 'campaign.cluster');
  requireRole(identity, cluster.projectId, 'maintainer', { kind: 'cluster', name: cluster.name });
  await requireActive(deps.db, { projectId: cluster.projectId });
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
  const textOfCampaign = yaml ? (value as string) : JSON.stringify((value as { campaign?: unknown }).campaign, null, 2);
  return {
    name: fields.name,
    projectId: cluster.projectId,
    description: fields.description ?? null,
    template: spec,
    // A YAML body is the whole suite, webhook secret included: that text becomes its campaigns' spec text.
    templateText: yaml ? withoutSecret(result.suite.textWithoutSecret ?? (value as string), fields.webhook?.secret) : textOfCampaign,
    cron: fields.schedule?.cron ?? null,
    timezone: fields.schedule?.timezone ?? 'UTC',
    baselinePolicy: baseline.policy,
    baselineCampaignId: baseline.policy === 'pinned' ? baseline.campaignId : null,
    policy: fields.regression,
    webhookUrl: fields.webhook?.url ?? null,
    webhookSecret: fields.webhook?.secret ?? null,
  };
}

/** POST /v1/suites: a new suite and its schedule; a suite of that name already is a conflict (PUT replaces one). */
export async function createNewSuite(deps: SuiteDeps, identity: TokenIdentity, body: SpecBody, log: Log): Promise<SuiteRecord> {
  const input = await suiteInput(deps, identity, body);
  if (await findSuiteByName(deps.db, input.name)) throw errors.conflict(`suite "${input.name}" already exists; replace it with PUT /v1/suites/${input.name}`);
  const suite = await createSuite(deps.db, input, deps.secrets);
  await scheduleHint(applySchedule(deps.queue, suite), log);
  return suite;
}

/** PUT /v1/suites/:name: replaces the suite of that name, or creates it; the body's name must be the path's. */
export async function putSuite(deps: SuiteDeps, identity: TokenIdentity, name: string, body: SpecBody, log: Log): Promise<{ view: SuiteView; created: boolean }> {
  const input = await suiteInput(deps, identity, body);
  if (input.name !== name) {
    throw errors.validation('suite', [{ path: 'name', code: 'invalid_value', message: `must be "${name}", the name in the path` }]);
  }
  const replaced = await replaceSuite(deps.db, name, input, deps.secrets);
  const suite = replaced ?? (await createSuite(deps.db, input, deps.secrets));
  await scheduleHint(applySchedule(deps.queue, suite), log);
  return { view: await viewWithLastRun(deps.db, suite), created: replaced === null };
}

/** The suite of that name (who may see it was checked by the route's access rule); 404 when there is none. */
export async function suiteNamed(db: Database, name: string): Promise<SuiteRecord> {
  const suite = await findSuiteByName(db, name);
  if (!suite) throw errors.notFound('suite', name);
  return suite;
}

/** A suite as the API shows it, with its last run. */
export async function viewWithLastRun(db: Database, suite: SuiteRecord): Promise<SuiteView> {
  const last = await lastSuiteRuns(db, [suite.id]);
  return suiteView(suite, last.get(suite.id) ?? null);
}

/** The suites of the caller's projects, each with its last run. */
export async function listVisibleSuites(db: Database, identity: TokenIdentity): Promise<SuiteView[]> {
  const suites = await listSuites(db, visibleProjects(identity));
  const last = await lastSuiteRuns(db, suites.map((s) => s.id));
  return suites.map((s) => suiteView(s, last.get(s.id) ?? null));
}

/** Deletes the suite and its schedule; the campaigns it ran stay. */
export async function removeSuite(deps: Pick<AppDeps, 'db' | 'queue'>, name: string, log: Log): Promise<void> {
  const deleted = await deleteSuite(deps.db, name);
  if (!deleted) throw errors.notFound('suite', name);
  await scheduleHint(removeSchedule(deps.queue, deleted.id), log);
}

/**
 * Starts a run of the suite now (a manual trigger): with an idempotency key, a retry of the same
 * request finds the run it started (`created: false`) instead of starting another.
 */
export async function triggerSuiteNow(deps: Pick<AppDeps, 'db' | 'queue' | 'config'>, name: string, idempotencyKey: string | undefined): Promise<{ view: SuiteRunView; created: boolean }> {
  const suite = await suiteNamed(deps.db, name);
  try {
    const { run, created } = await triggerSuite(
      { db: deps.db, queue: deps.queue, limits: { maxRuns: deps.config.ERG_MAX_RUNS } },
      suite,
      { trigger: 'manual', key: idempotencyKey ? `manual:${suite.id}:${idempotencyKey}` : null },
    );
    return { view: await suiteRunView(deps.db, run, suite.name), created };
  } catch (err) {
    if (err instanceof SuiteError) throw errors.suiteRefused(err);
    throw err;
  }
}

/** The suite's runs, newest first, a page at a time. */
export async function suiteRuns(db: Database, name: string, page: { limit: number; offset: number }): Promise<{ items: SuiteRunView[]; total: number }> {
  const suite = await suiteNamed(db, name);
  const runs = await listSuiteRuns(db, suite.id, page);
  return { items: await Promise.all(runs.items.map((r) => suiteRunView(db, r, suite.name))), total: runs.total };
}

/** One run of the suite; 404 for a run of another suite. */
export async function suiteRun(db: Database, name: string, runId: string): Promise<SuiteRunView> {
  const suite = await suiteNamed(db, name);
  const run: SuiteRunRecord | null = await findSuiteRun(db, runId);
  if (!run || run.suiteId !== suite.id) throw errors.notFound('suite run', runId);
  return suiteRunView(db, run, suite.name);
}

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
async function scheduleHint(work: Promise<void>, log: Log): Promise<void> {
  try {
    await withinDeadline(work);
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'could not update the suite schedule in Redis; the scheduler re-applies it from Postgres');
  }
}
