/**
 * The body of the EnergyRunner's worker thread (energy-runner.ts): computes runs' energy figures
 * — refreshRunEnergy reads a run's samples and marks from Postgres, computes and stores — with a
 * database pool of its own, so that neither the reading nor the computing holds the scheduler's
 * event loop. Runs are independent: several may be in progress at once (their queries overlap;
 * the computing takes turns on this thread). Nothing here touches the scheduler's state.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createDatabase } from '@erg/db';
import { refreshRunEnergy } from '@erg/results';
import type { EnergyReply, EnergyRequest, EnergyWorkerData } from './energy-runner';

const { databaseUrl, connections } = workerData as EnergyWorkerData;
const db = createDatabase(databaseUrl, { max: connections });
const port = parentPort!;

port.on('message', (request: EnergyRequest) => {
  if (request.kind === 'close') {
    // The pool's connections end before the thread does: a test's database can then be dropped.
    void db.close().finally(() => port.postMessage({ kind: 'closed' } satisfies EnergyReply));
    return;
  }
  refreshRunEnergy(db, request.runId).then(
    (result) => port.postMessage({ kind: 'done', id: request.id, computed: result !== null } satisfies EnergyReply),
    (err: unknown) =>
      port.postMessage({ kind: 'failed', id: request.id, message: err instanceof Error ? err.message : String(err), code: (err as { code?: string } | null)?.code ?? null } satisfies EnergyReply),
  );
});
port.postMessage({ kind: 'ready' } satisfies EnergyReply);
