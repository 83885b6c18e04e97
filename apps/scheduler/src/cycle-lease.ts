import { advanceSubmitEpoch, type ClaimGuard, type ClusterLease, type ClusterRecord, type Database } from '@erg/db';
import type { Fence } from '@erg/slurm';
import { ErgError } from '@erg/spec';
import type { ClusterLink } from './connections';

/**
 * The lease a cycle holds on its cluster (@erg/db cluster-lease.ts) together with the cluster's
 * submission fence (@erg/slurm fence.ts): the epoch that claims and settles runs, and the raise
 * that must precede both settling runs in doubt and the first sbatch of the cycle. Raised at most
 * once per cycle, and only by cycles that settle or submit — a cycle that only tracks jobs costs
 * no extra command on the cluster.
 */
export class CycleLease {
  private raised: Promise<bigint> | null = null;

  constructor(
    private readonly db: Database,
    private readonly lease: ClusterLease,
    private readonly cluster: ClusterRecord,
    private readonly link: ClusterLink,
  ) {}

  /** True once the lease's database connection was lost: a newer lease may exist; stop submitting. */
  get lost(): boolean {
    return this.lease.lost;
  }

  /** This lease's epoch (taken from the cluster's counter on first use). */
  epoch(): Promise<bigint> {
    return this.lease.epoch();
  }

  /**
   * The fence on the cluster raised to this lease's epoch: from then on no sbatch loop of an
   * earlier lease can submit, and every job one did submit is visible to squeue. Throws
   * LeaseLostError when a newer lease has already raised it.
   */
  ensureFenceRaised(): Promise<bigint> {
    this.raised ??= (async () => {
      const epoch = await this.lease.epoch();
      const result = await this.link.slurm.raiseFence(this.fence(epoch));
      if (!result.raised) {
        // The next lease starts past the fence, should the database be behind it (restored from a backup).
        await advanceSubmitEpoch(this.db, this.cluster.id, result.current);
        throw new LeaseLostError(this.cluster.name, `the cluster's fence holds epoch ${result.current}, newer than this cycle's ${epoch}`);
      }
      return epoch;
    })();
    return this.raised;
  }

  /** The fence a submit loop of this lease checks before each sbatch. */
  fence(epoch: bigint): Fence {
    return { path: fencePath(this.cluster), epoch };
  }

  /** Guard for transitions of runs this lease claimed. */
  async own(): Promise<ClaimGuard> {
    return { epoch: await this.lease.epoch(), claimedBy: 'this-lease' };
  }

  /** Guard for settling runs earlier leases claimed and left in doubt. */
  async earlier(): Promise<ClaimGuard> {
    return { epoch: await this.lease.epoch(), claimedBy: 'earlier-lease' };
  }
}

/**
 * Where the cluster's fence lives: in its work dir (storage every login node shares), named with
 * the cluster's id so that two clusters registered with one work dir never share a fence.
 */
export function fencePath(cluster: Pick<ClusterRecord, 'id' | 'workDir'>): string {
  return `${cluster.workDir}/.erg/fence-${cluster.id}`;
}

/**
 * A newer lease of the cluster exists (this one's database connection was lost, or another
 * scheduler raised the fence past it): the cycle stops, leaving what it claimed to the newer one.
 * Not the cluster's failure: it is never shown as a pending reason.
 */
export class LeaseLostError extends ErgError<'ERG_LEASE_LOST'> {
  constructor(cluster: string, why: string) {
    super('ERG_LEASE_LOST', `cycle of cluster ${cluster} stopped: a newer lease took over (${why})`);
  }
}
