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

/**
 * Asks a scheduler to recompute the runs whose telemetry changed after their energy was computed
 * (a late batch), now instead of at its next tick. Best effort, like wakeScheduler: the batch's
 * transaction marked the run, so the tick finds it whatever happens here.
 */
export async function askForEnergyRefresh(deps: Pick<AppDeps, 'queue'>, log: { warn: (o: object, m: string) => void }): Promise<void> {
  try {
    await withinDeadline(enqueue(deps.queue, 'refresh-energy', {}));
  } catch (err) {
    log.warn({ err }, 'could not ask for a recompute of late telemetry; the next scheduler tick will do it');
  }
}
