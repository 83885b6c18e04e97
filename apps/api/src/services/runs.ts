import { findClusterById, findRunDetail, findRunLogSource, finishImportedRun, listRunNodes, requestRunCancel, type Database, type RunDetail, type RunNodeRecord } from '@erg/db';
import type { AppDeps } from '../app';
import { errors } from '../errors';
import type { LogsBody } from '../cluster-files';
import { askForEnergyRefresh, wakeScheduler } from '../wake-scheduler';
import type { Log } from './log';

/**
 * Runs: reading one, cancelling one alone, closing a run of an import campaign by hand, and its
 * logs from the cluster. The routes (routes/runs.ts) read the request and write the answer around
 * these steps; who may call them was checked by the route's access rule.
 */

type RunDeps = Pick<AppDeps, 'db' | 'queue'>;

/** The run with its campaign and cluster; 404 when there is none. */
export async function findRun(db: Database, id: string): Promise<RunDetail> {
  const run = await findRunDetail(db, id);
  if (!run) throw errors.notFound('run', id);
  return run;
}

/** A run with the nodes it ran on: what GET /v1/runs/:id shows. */
export async function runWithNodes(db: Database, id: string): Promise<{ run: RunDetail; nodes: RunNodeRecord[] }> {
  const run = await findRun(db, id);
  return { run, nodes: await listRunNodes(db, run.id) };
}

/**
 * Cancels one run; the rest of its campaign goes on. A pending run ends at once; one with a Slurm
 * job is the scheduler's to scancel, so its scheduler is woken instead of waiting for its tick.
 */
export async function cancelRun(deps: RunDeps, id: string, log: Log): Promise<{ id: string; outcome: Awaited<ReturnType<typeof requestRunCancel>> }> {
  const run = await findRun(deps.db, id);
  const outcome = await requestRunCancel(deps.db, run.id);
  const clusterId = outcome === 'cancelling' ? (await findRunLogSource(deps.db, run.id))?.clusterId : null;
  if (clusterId) await wakeScheduler(deps, clusterId, 'run cancelled', log);
  return { id: run.id, outcome };
}

/** What closing an imported run by hand says of it: the window its measurement covered. */
export interface ImportedRunEnd {
  startedAt: Date;
  endedAt: Date;
  exitCode: number | null;
  metrics: Record<string, number | null>;
}

/**
 * Import mode: closes a run of an `execution: import` campaign with its window. Its energy is
 * the scheduler's to compute (off any request: a run of a million marks took seconds), from the
 * telemetry posted to it: finishImportedRun marks it due in the same transaction, and the
 * scheduler is woken now rather than at its next tick. A run of a campaign erg submits, or one
 * already ended, is a conflict (409).
 */
export async function finishRunByHand(deps: RunDeps, id: string, end: ImportedRunEnd, log: Log): Promise<{ run: RunDetail; nodes: RunNodeRecord[] }> {
  const run = await findRun(deps.db, id);
  if (run.campaign.execution !== 'import') throw errors.conflict(`run ${run.id} belongs to a campaign erg submits to Slurm; only runs of execution: import campaigns are finished by hand`);
  const done = await finishImportedRun(deps.db, { runId: run.id, ...end });
  if (!done) throw errors.conflict(`run ${run.id} is already ${run.state}`);
  await askForEnergyRefresh(deps, log);
  return runWithNodes(deps.db, run.id);
}

/** A run's logs: the tails kept in the database, or a stream of them read from the cluster. */
export type RunLogsAnswer =
  | { source: 'stored'; body: { runId: string; source: 'stored'; stdout: string; stderr: string; truncated: boolean } }
  | { source: 'cluster'; body: NodeJS.ReadableStream };

/** The limits on log reads at once (ERG_LOG_READS_PER_TOKEN, ERG_LOG_READS_PER_CLUSTER) and the deadline of one. */
export interface LogReadLimits {
  perToken: number;
  perCluster: number;
  timeoutMs: number;
}

/**
 * A run's stdout and stderr. Never submitted, or imported: the stored tails. Otherwise read from
 * its directory on the cluster, holding one of the caller's (`holder`, the token) and one of the
 * cluster's places until the last byte is sent (429 with Retry-After when either is full); when the
 * cluster cannot be read, a finalized run's stored tails still answer.
 */
export async function openRunLogs(
  deps: Pick<AppDeps, 'db' | 'clusterFiles'>, id: string, request: { holder: string; tailBytes: number }, limits: LogReadLimits,
): Promise<RunLogsAnswer> {
  const run = await findRunLogSource(deps.db, id);
  if (!run) throw errors.notFound('run', id);
  const cluster = run.clusterId === null ? null : await findClusterById(deps.db, run.clusterId);
  const stored = { source: 'stored' as const, body: { runId: run.id, source: 'stored' as const, stdout: run.stdoutTail ?? '', stderr: run.stderrTail ?? '', truncated: false } };
  if (!cluster || !run.runDir) return stored;
  const tokenKey = `token:${request.holder}`;
  const release = deps.clusterFiles.tryAcquire([{ key: tokenKey, limit: limits.perToken }, { key: `cluster:${cluster.id}`, limit: limits.perCluster }]);
  if (!release) {
    // Which of the two is full: the caller's own reads, or the cluster's.
    const tokenFree = deps.clusterFiles.tryAcquire([{ key: tokenKey, limit: limits.perToken }]);
    tokenFree?.();
    throw tokenFree ? errors.logReadsBusy(`cluster "${cluster.name}"`, limits.perCluster) : errors.logReadsBusy('this token', limits.perToken);
  }
  let logs: LogsBody;
  try {
    logs = await deps.clusterFiles.openLogs(cluster, run.id, run.runDir, { tailBytes: request.tailBytes, timeoutMs: limits.timeoutMs });
  } catch (err) {
    release();
    if (run.finalizedAt) return stored; // the tail kept at the end is still worth showing
    throw errors.clusterUnavailable(cluster.name, (err as Error).message);
  }
  if (logs.status === 'refused') {
    release();
    throw errors.logUnreadable(run.id, logs.message);
  }
  // The places are held until the last byte is sent, or the client goes away.
  logs.body.once('close', release);
  return { source: 'cluster', body: logs.body };
}
