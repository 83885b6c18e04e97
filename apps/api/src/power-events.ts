import type { FastifyBaseLogger } from 'fastify';
import { notifyEvent, readLastPowerSamples, type Database } from '@erg/db';
import { livePower } from '@erg/energy';
import { LIVE_POWER_WINDOW_MS } from '@erg/spec';

/** At most one `power` event per run this often. */
const MIN_INTERVAL_MS = 1000;
/** Throttle entries older than this are forgotten (bounded memory with many runs). */
const FORGET_AFTER_MS = 60_000;

/**
 * Publishes a run's live power on the event channel after telemetry for it was committed, at most
 * once per run per second per API process. Best effort: a failure is logged, never fails ingest.
 */
export class PowerEvents {
  private readonly last = new Map<string, number>();

  constructor(private readonly db: Database, private readonly log: FastifyBaseLogger, private readonly now: () => number = Date.now) {}

  /** Call after a batch for the run is committed; returns at once, the work happens in the background. */
  batchCommitted(runId: string, campaignId: string): void {
    const now = this.now();
    const previous = this.last.get(runId);
    if (previous !== undefined && now - previous < MIN_INTERVAL_MS) return;
    this.last.set(runId, now);
    if (this.last.size > 10_000) for (const [id, at] of this.last) if (now - at > FORGET_AFTER_MS) this.last.delete(id);
    void this.publish(runId, campaignId, now).catch((err: Error) => this.log.warn({ err, runId }, 'could not publish a power event'));
  }

  private async publish(runId: string, campaignId: string, now: number): Promise<void> {
    const samples = (await readLastPowerSamples(this.db, [runId], now - LIVE_POWER_WINDOW_MS)).get(runId) ?? [];
    const power = livePower(samples);
    if (!power) return;
    await notifyEvent(this.db, { type: 'power', runId, campaignId, t: power.t, w: power.w });
  }
}
