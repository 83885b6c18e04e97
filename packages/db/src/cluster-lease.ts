import type pg from 'pg';
import { poolOf, type Database } from './client';

/**
 * A cluster's lease: the right to run one scheduler cycle of that cluster, held by at most one
 * process at a time whatever the number of scheduler processes.
 *
 * It is a Postgres session advisory lock on a connection of its own, not a Redis key: Postgres is
 * the record (a Redis that restarts empty would drop a lock in the middle of a cycle), and a
 * session lock is released by Postgres the moment its connection ends, so a killed scheduler's
 * lease is free at once. TCP keepalives on that connection bound how long the lease of a host
 * that vanished (no FIN) survives to about 30 s.
 *
 * Every lease carries an epoch: `clusters.submit_epoch`, incremented when the lease first needs
 * one. The epoch fences what a lease that was lost (Postgres restarted under it, or its holder
 * froze) may still do: claims stamp runs with it, later transitions of those runs require it,
 * and the cluster's fence file (see @erg/slurm fenceCommands) stops remote sbatch loops of older
 * epochs. The lock makes overlap rare; the epoch makes it harmless.
 */
export interface ClusterLease {
  readonly clusterId: string;
  /** True once the lease's connection was lost: another process may hold the lease now. */
  readonly lost: boolean;
  /** This lease's epoch, taken (the cluster's counter incremented) on the first call. */
  epoch(): Promise<bigint>;
  /** Releases the lock and returns the connection; never throws. */
  release(): Promise<void>;
}

// Advisory locks share one key space per database: erg's leases take class 0x6572 ('er') and a
// hash of the cluster id as the object, out of the way of the ids tests and tools use.
const LEASE_CLASS = 0x6572;

/** Keepalive settings of the lease's connection (seconds): a silent peer is dropped after ~30 s. */
const KEEPALIVE = { idle: 10, interval: 5, count: 4 };

/**
 * Takes the cluster's lease if no other session holds it; null when one does. The caller must
 * release() it (in a finally).
 */
export async function tryTakeClusterLease(db: Database, clusterId: string): Promise<ClusterLease | null> {
  const client = await poolOf(db).connect();
  let lost = false;
  // A checked-out client's errors would otherwise be unhandled; losing it loses the lease.
  const onError = () => {
    lost = true;
  };
  client.on('error', onError);
  client.on('end', onError);
  let locked = false;
  try {
    await client.query(
      `SELECT set_config('tcp_keepalives_idle', $1, false), set_config('tcp_keepalives_interval', $2, false), set_config('tcp_keepalives_count', $3, false)`,
      [String(KEEPALIVE.idle), String(KEEPALIVE.interval), String(KEEPALIVE.count)],
    );
    const res = await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked`, [LEASE_CLASS, clusterId]);
    locked = res.rows[0]!.locked;
  } catch (err) {
    giveBack(client, onError, true);
    throw err;
  }
  if (!locked) {
    giveBack(client, onError, false);
    return null;
  }
  let epoch: Promise<bigint> | null = null;
  let released = false;
  return {
    clusterId,
    get lost() {
      return lost;
    },
    epoch() {
      epoch ??= client
        .query<{ epoch: string }>(`UPDATE clusters SET submit_epoch = submit_epoch + 1 WHERE id = $1 RETURNING submit_epoch::text AS epoch`, [clusterId])
        .then((r) => {
          if (r.rows.length === 0) throw new Error(`cluster ${clusterId} no longer exists`);
          return BigInt(r.rows[0]!.epoch);
        });
      return epoch;
    },
    async release() {
      if (released) return;
      released = true;
      if (lost) {
        giveBack(client, onError, true);
        return;
      }
      try {
        await client.query(`SELECT pg_advisory_unlock($1, hashtext($2))`, [LEASE_CLASS, clusterId]);
        giveBack(client, onError, false);
      } catch {
        // A connection that cannot unlock is destroyed: closing it releases the lock too.
        giveBack(client, onError, true);
      }
    },
  };
}

function giveBack(client: pg.PoolClient, onError: () => void, destroy: boolean): void {
  client.removeListener('error', onError);
  client.removeListener('end', onError);
  client.release(destroy);
}

/**
 * Makes the cluster's next epoch larger than `seen`, an epoch found in the cluster's fence file.
 * Normally a no-op: a fence ahead of the database means a newer lease exists, whose epoch is
 * already counted. But after Postgres is restored from a backup the counter is behind every fence
 * erg ever raised, and without this each lease would find its fence stale forever.
 */
export async function advanceSubmitEpoch(db: Database, clusterId: string, seen: bigint): Promise<void> {
  await poolOf(db).query(`UPDATE clusters SET submit_epoch = GREATEST(submit_epoch, $2::bigint) WHERE id = $1`, [clusterId, seen.toString()]);
}

/** The cluster's newest epoch (tests and the fence's stale check read it). */
export async function currentSubmitEpoch(db: Database, clusterId: string): Promise<bigint> {
  const res = await poolOf(db).query<{ epoch: string }>(`SELECT submit_epoch::text AS epoch FROM clusters WHERE id = $1`, [clusterId]);
  return BigInt(res.rows[0]?.epoch ?? '0');
}
