import { Backoff } from '@erg/backoff';

/**
 * How much the scheduler sends a cluster whose site limits refused jobs (QOS/association
 * MaxSubmitJobs, MaxJobCount, an array larger than allowed: sbatch-failure.ts SITE_LIMIT).
 * Slurm does not say how much room is left, so erg finds out, per cluster, in this process:
 *  - a refusal halves how many runs the next batch may claim (an array of 50 refused becomes one
 *    of 25, then 12, …), and holds submission back for a backoff (2 s doubling to 60 s);
 *  - every accepted submission doubles the allowance again, up to no limit;
 *  - a run of the cluster ending lifts the hold at once: there is room for one more job.
 * Nothing refused this way was created, so a retry can never duplicate a job.
 */
/** An allowance this large limits nothing (campaigns have at most 100,000 runs). */
const NO_LIMIT = 100_000;

export class SubmitLimits {
  private readonly clusters = new Map<string, { allowance: number; holdUntil: number; backoff: Backoff; reason: string }>();

  /** Most runs the next batch of this cluster may claim (Infinity: no site limit met). */
  allowance(clusterId: string): number {
    return this.clusters.get(clusterId)?.allowance ?? Infinity;
  }

  /** Why submission to the cluster is held back now, or null when it may go on. */
  heldBack(clusterId: string, now = Date.now()): string | null {
    const state = this.clusters.get(clusterId);
    return state && now < state.holdUntil ? state.reason : null;
  }

  /** A submission of `runs` runs was refused by a site limit with Slurm's `error`. */
  refused(clusterId: string, runs: number, error: string, now = Date.now()): void {
    const state = this.clusters.get(clusterId) ?? { allowance: Infinity, holdUntil: 0, backoff: new Backoff({ initialMs: 2_000, maxMs: 60_000 }), reason: '' };
    state.allowance = Math.max(1, Math.floor(Math.min(state.allowance, runs) / 2));
    state.holdUntil = now + state.backoff.next();
    state.reason = error;
    this.clusters.set(clusterId, state);
  }

  /** A submission was accepted: the allowance doubles, until it is no limit at all. */
  accepted(clusterId: string): void {
    const state = this.clusters.get(clusterId);
    if (!state) return;
    state.backoff.succeeded();
    state.allowance *= 2;
    if (state.allowance >= NO_LIMIT) this.clusters.delete(clusterId);
  }

  /** Runs of the cluster ended: their jobs made room. */
  ended(clusterId: string): void {
    const state = this.clusters.get(clusterId);
    if (state) state.holdUntil = 0;
  }
}
