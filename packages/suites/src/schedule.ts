import type { Queue } from 'bullmq';
import type { SuiteRecord } from '@erg/db';
import { jobs } from '@erg/queue';

/**
 * Cron schedules are BullMQ job schedulers, one per suite, id `suite:<suite id>`: BullMQ makes
 * exactly one `suite-trigger` job per slot however many schedulers run, and that job's id is the
 * idempotency key of the suite run it starts. Postgres stays the source of truth: Redis keeps
 * nothing on disk here, so the scheduler re-applies every suite's schedule when it starts and
 * now and then while it runs (syncSchedules).
 */
const PREFIX = 'suite:';

export function schedulerIdOf(suiteId: string): string {
  return `${PREFIX}${suiteId}`;
}

/** Creates, updates or removes one suite's job scheduler to match the suite. */
export async function applySchedule(queue: Queue, suite: Pick<SuiteRecord, 'id' | 'cron' | 'timezone'>): Promise<void> {
  const id = schedulerIdOf(suite.id);
  if (!suite.cron) {
    await queue.removeJobScheduler(id);
    return;
  }
  const data = jobs['suite-trigger'].payload.parse({ suiteId: suite.id });
  await queue.upsertJobScheduler(id, { pattern: suite.cron, tz: suite.timezone }, { name: 'suite-trigger', data, opts: jobs['suite-trigger'].options() });
}

export async function removeSchedule(queue: Queue, suiteId: string): Promise<void> {
  await queue.removeJobScheduler(schedulerIdOf(suiteId));
}

/**
 * Makes Redis's job schedulers match the suites: every scheduled suite has its scheduler with
 * its pattern and zone, and no scheduler is left for a suite that was deleted or unscheduled.
 */
export async function syncSchedules(queue: Queue, suites: readonly Pick<SuiteRecord, 'id' | 'cron' | 'timezone'>[]): Promise<{ applied: number; removed: number }> {
  const wanted = new Map(suites.filter((s) => s.cron).map((s) => [schedulerIdOf(s.id), s]));
  const existing = await queue.getJobSchedulers(0, -1);
  let removed = 0;
  for (const scheduler of existing) {
    const id = scheduler.key;
    if (id.startsWith(PREFIX) && !wanted.has(id)) {
      await queue.removeJobScheduler(id);
      removed++;
    }
  }
  const current = new Map(existing.map((s) => [s.key, s]));
  let applied = 0;
  for (const [id, suite] of wanted) {
    const have = current.get(id);
    if (have && have.pattern === suite.cron && (have.tz ?? 'UTC') === suite.timezone) continue;
    await applySchedule(queue, suite);
    applied++;
  }
  return { applied, removed };
}
