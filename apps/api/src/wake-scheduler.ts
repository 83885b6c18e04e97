import { enqueue, withinDeadline } from '@erg/queue';
import type { AppDeps } from './app';

/**
 * Asks a scheduler for a cycle of one cluster now (a new campaign, a cancel, a cluster to probe)
 * instead of at its next tick. Best effort: when Redis cannot take the job in time, the next tick
 * does the same work.
 */
export async function wakeScheduler(deps: Pick<AppDeps, 'queue'>, clusterId: string, reason: string, log: { warn: (o: object, m: string) => void }): Promise<void> {
  try {
    await withinDeadline(enqueue(deps.queue, 'cycle', { clusterId, reason }));
  } catch (err) {
    log.warn({ err, reason }, 'could not enqueue a scheduler cycle; the next tick will do the work');
  }
}
