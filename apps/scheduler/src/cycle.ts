import { findClusterById, recordClusterContact, recordLearnedHostKey, tryTakeClusterLease, type ClusterRecord } from '@erg/db';
import type { ClusterLink } from './connections';
import type { SchedulerContext } from './context';
import { probeClusterIfDue } from './cluster-probe';
import { CycleLease, LeaseLostError } from './cycle-lease';
import { countCycleError } from './metrics';
import { finalizeEndedRuns, reconcileCluster } from './reconcile';
import type { ClusterCapabilities, ErgError } from '@erg/spec';
import { isClusterError } from './ssh-errors';
import { submitPendingRuns } from './submit';

/**
 * One cycle of one cluster: reconcile first (which settles runs a crash left in doubt), then
 * submit what is pending, then finalize the runs whose jobs ended. Holding the cluster's lease
 * (a Postgres advisory lock, see cycle-lease.ts) means no other cycle of this cluster runs, here
 * or in another scheduler process; its epoch and the cluster's fence keep a cycle that lost the
 * lease from doing harm. SSH and Slurm failures are recorded on the cluster — its runs show them
 * as their pending reason — and the next tick tries again.
 */
export async function runCycle(ctx: SchedulerContext, clusterId: string): Promise<void> {
  const cluster = await findClusterById(ctx.db, clusterId);
  if (!cluster) return;
  const lease = await tryTakeClusterLease(ctx.db, clusterId);
  if (!lease) return; // another cycle holds it and will see the same work
  const endTimer = ctx.metrics.cycleDuration.startTimer({ cluster: cluster.name });
  try {
    try {
      // Inside the try: a key this process cannot open (ERG_SECRET_*) is the cluster's failure to show, like an SSH one.
      const link = ctx.links.get(cluster);
      const cycle = new CycleLease(ctx.db, lease, cluster, link);
      // At first contact the probe comes first: the cluster's MaxArraySize decides how runs are
      // grouped into arrays. Afterwards it comes last (below).
      const firstContact = cluster.capabilities === null;
      let probeFailure: ErgError | null = null;
      try {
        let capabilities = cluster.capabilities;
        if (firstContact) ({ capabilities, failure: probeFailure } = await firstProbe(ctx, cluster, link));
        const known = { ...cluster, capabilities };
        const ended = await reconcileCluster(ctx, known, link, cycle);
        try {
          await submitPendingRuns(ctx, known, link, cycle);
        } finally {
          // After submitting (slow reads of one run's output never delay the others' jobs), and
          // even when submitting failed (a cluster that refuses new files still has runs to end).
          await finalizeEndedRuns(ctx, cluster, link, ended);
        }
        // Last, so it never delays or blocks the cycle's own work (but at first contact, above); a
        // new cluster (no runs yet) gets cycles for this alone. Campaigns that set a power state are only accepted once it ran,
        // so their runs are submitted with the capabilities known.
        if (!firstContact) await probeClusterIfDue(ctx, cluster, link);
      } finally {
        await pinLearnedHostKey(ctx, cluster, link);
      }
      // The first probe could not reach the cluster and nothing since has (a new cluster has no
      // runs, so nothing else tried): that is this cycle's failure, recorded as any other — not a
      // contact, which would show an unreachable cluster as healthy.
      if (probeFailure && link.connection.lastError !== null) throw probeFailure;
      if (cluster.lastError !== null || cluster.lastContactAt === null || Date.now() - cluster.lastContactAt.getTime() > 60_000) {
        await recordClusterContact(ctx.db, cluster.id, null);
      }
    } catch (err) {
      if (err instanceof LeaseLostError) {
        // Another scheduler owns the cluster now and settles what this cycle left; nothing to show users.
        ctx.log.warn({ cluster: cluster.name, err: err.message }, 'lease lost; cycle stopped');
        return;
      }
      if (!isClusterError(err)) throw err;
      countCycleError(ctx.metrics, cluster.name, err);
      const message = err.message;
      // Said once per distinct failure, not once per tick while the cluster stays away; retryable
      // false: it lasts until someone changes the cluster or erg's configuration (ssh-errors.ts).
      if (message !== cluster.lastError) {
        ctx.log.warn({ cluster: cluster.name, code: err.code, retryable: err.retryable, err: message }, 'cluster cycle failed; will retry');
        await recordClusterContact(ctx.db, cluster.id, message);
      }
    }
  } finally {
    endTimer();
    await lease.release();
  }
}

/**
 * The probe at first contact. A cluster that cannot be reached now is not probed now, and the
 * cycle goes on as before without its capabilities (no arrays): its runs are claimed and given
 * back with the reason, as for any cycle that finds the cluster away, and the next cycle probes.
 * The failure comes back with the (null) capabilities: runCycle records it unless a later step
 * reached the cluster.
 */
async function firstProbe(ctx: SchedulerContext, cluster: ClusterRecord, link: ClusterLink): Promise<{ capabilities: ClusterCapabilities | null; failure: ErgError | null }> {
  try {
    return { capabilities: await probeClusterIfDue(ctx, cluster, link), failure: null };
  } catch (err) {
    if (!isClusterError(err)) throw err;
    return { capabilities: null, failure: err };
  }
}

/**
 * Trust on first use: once a connection of a cluster without a fingerprint has succeeded, the
 * fingerprint it accepted becomes the cluster's (and the connection already refuses any other).
 */
async function pinLearnedHostKey(ctx: SchedulerContext, cluster: ClusterRecord, link: ClusterLink): Promise<void> {
  const seen = link.connection.hostKeySha256;
  if (cluster.hostKeySha256 !== null || seen === null) return;
  if (await recordLearnedHostKey(ctx.db, cluster.id, seen)) {
    ctx.log.warn(
      { cluster: cluster.name, host: link.connection.hostPort, hostKeySha256: seen },
      'trusted the host key on first use and pinned it; compare it with `ssh-keyscan -p <port> <host> | ssh-keygen -lf -` run on a trusted network',
    );
  }
}
