import { UnrecoverableError, type Job, type Queue } from 'bullmq';
import { findSuite, findSuiteRun, listSuites, openSuiteSecret, pendingWebhooks, projectWebhookPolicy, recordWebhookAttempt } from '@erg/db';
import { redactSecrets } from '@erg/secrets';
import { enqueue, jobs, WEBHOOK_ATTEMPTS } from '@erg/queue';
import {
  deliverWebhook, INTERNAL_FAILURE, judgeFinishedSuiteRuns, NO_WEBHOOK_FAILURE, suiteRunView, SuiteError, syncSchedules, triggerSuite, webhookBody,
  WebhookError, type Resolver,
} from '@erg/suites';
import type { SchedulerContext } from './context';

/**
 * A cron slot of a suite fired: start its run. The job id is one per slot, and it is the run's
 * idempotency key, so a retry after a crash finds the run the first attempt made.
 */
export async function runScheduledTrigger(ctx: SchedulerContext, queue: Queue, job: Job): Promise<void> {
  const { suiteId } = jobs['suite-trigger'].payload.parse(job.data);
  const suite = await findSuite(ctx.db, suiteId);
  if (!suite) {
    ctx.log.warn({ suiteId }, 'scheduled trigger of a deleted suite; the next schedule sync removes its scheduler');
    return;
  }
  try {
    const { run, created } = await triggerSuite(
      { db: ctx.db, queue, limits: { maxRuns: ctx.config.ERG_MAX_RUNS } },
      suite,
      { trigger: 'schedule', key: `schedule:${job.id}` },
    );
    ctx.log.info({ suite: suite.name, suiteRunId: run.id, campaignId: run.campaignId, created }, 'scheduled suite run started');
  } catch (err) {
    // A slot of a suite whose project or cluster is deactivated is skipped: an admin's decision, not a failure.
    if (err instanceof SuiteError && err.code === 'ERG_DEACTIVATED') {
      ctx.log.info({ suite: suite.name, err: err.message }, 'scheduled suite run skipped');
      return;
    }
    // Retrying cannot register a cluster or fix a template: fail the job for good, loudly.
    if (err instanceof SuiteError) {
      ctx.log.error({ suite: suite.name, code: err.code, err: err.message }, 'scheduled suite run could not start');
      throw new UnrecoverableError(err.message);
    }
    throw err;
  }
}

/**
 * One delivery attempt of a finished suite run's webhook; BullMQ retries with backoff. The URL
 * is checked against the project's webhook policy as it is now (an admin may have narrowed it
 * since the suite was stored). What is stored — and shown to the suite's viewers — is only
 * "delivery failed (…)"; the receiver's address and the cause go to this log.
 *
 * @param resolve the DNS lookup (tests answer names themselves); getaddrinfo when absent
 */
export async function runWebhookDelivery(ctx: SchedulerContext, job: Job, resolve?: Resolver): Promise<void> {
  const { suiteRunId } = jobs.webhook.payload.parse(job.data);
  const run = await findSuiteRun(ctx.db, suiteRunId);
  if (!run || run.webhookStatus !== 'pending') return;
  const suite = await findSuite(ctx.db, run.suiteId);
  if (!suite?.webhookUrl) {
    await recordWebhookAttempt(ctx.db, run.id, { status: 'failed', error: NO_WEBHOOK_FAILURE });
    ctx.metrics.webhookDeliveries.inc({ outcome: 'failed' });
    return;
  }
  const body = webhookBody(await suiteRunView(ctx.db, run, suite.name));
  try {
    const secret = openSuiteSecret(ctx.secrets, suite);
    const policy = await projectWebhookPolicy(ctx.db, suite.projectId);
    await deliverWebhook(suite.webhookUrl, body, { deliveryId: run.id, secret, timeoutMs: ctx.config.ERG_WEBHOOK_TIMEOUT_MS, policy, ...(resolve ? { resolve } : {}) });
  } catch (err) {
    const shown = err instanceof WebhookError ? err.message : INTERNAL_FAILURE;
    const detail = err instanceof WebhookError ? err.detail : (err as Error).message;
    const lastAttempt = err instanceof WebhookError && err.permanent ? true : job.attemptsMade + 1 >= (job.opts.attempts ?? WEBHOOK_ATTEMPTS);
    await recordWebhookAttempt(ctx.db, run.id, { status: lastAttempt ? 'failed' : 'pending', error: shown });
    ctx.metrics.webhookDeliveries.inc({ outcome: lastAttempt ? 'failed' : 'retry' });
    ctx.log.warn(
      { suite: suite.name, suiteRunId: run.id, url: redactSecrets(suite.webhookUrl), attempt: job.attemptsMade + 1, final: lastAttempt, err: shown, detail },
      'webhook delivery failed',
    );
    // BullMQ keeps the failed reason in Redis (and its dashboards show it): the short text only.
    throw lastAttempt ? new UnrecoverableError(shown) : new Error(shown);
  }
  await recordWebhookAttempt(ctx.db, run.id, { status: 'delivered', error: null });
  ctx.metrics.webhookDeliveries.inc({ outcome: 'delivered' });
  ctx.log.info({ suite: suite.name, suiteRunId: run.id, status: run.status }, 'webhook delivered');
}

/**
 * Suites' share of every tick: judge suite runs whose campaign has finished, and make sure every
 * undelivered webhook has a delivery job (Postgres says what is pending; a job lost with Redis
 * is made again, and one still waiting keeps its id, so nothing is sent twice by this).
 */
export async function suiteHousekeeping(ctx: SchedulerContext, queue: Queue): Promise<void> {
  for (const run of await judgeFinishedSuiteRuns(ctx.db)) {
    ctx.log.info({ suiteRunId: run.id, campaignId: run.campaignId, status: run.status }, 'suite run judged');
    ctx.metrics.suiteRunsJudged.inc({ status: run.status });
  }
  for (const run of await pendingWebhooks(ctx.db)) await enqueue(queue, 'webhook', { suiteRunId: run.id });
}

/** Re-applies every suite's cron schedule to Redis; throttled to once per interval. */
export class ScheduleSync {
  private last = 0;

  constructor(private readonly ctx: SchedulerContext, private readonly queue: Queue) {}

  async maybeSync(now = Date.now()): Promise<void> {
    if (now - this.last < this.ctx.config.ERG_SUITE_SYNC_INTERVAL_MS) return;
    await this.syncNow(now);
  }

  /** Re-applies every suite's cron schedule now (Redis was found empty). */
  async syncNow(now = Date.now()): Promise<void> {
    this.last = now;
    const result = await syncSchedules(this.queue, await listSuites(this.ctx.db));
    if (result.applied + result.removed > 0) this.ctx.log.info(result, 'suite schedules synced');
  }
}
