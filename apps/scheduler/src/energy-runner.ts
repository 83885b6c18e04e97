/**
 * EnergyRunner: where the scheduler computes runs' energy figures — off its event loop. A run's
 * figures cost time and memory that grow with its telemetry and marks (a run of a million marks
 * took seconds, issue 27), and the scheduler's thread must go on polling clusters, finalizing
 * runs and answering its jobs meanwhile. So every recompute — a run just finalized
 * (reconcile.ts), the runs the API marked due (an imported run finished, a late batch: the tick's
 * and the `refresh-energy` job's refreshStaleRunEnergy) — is sent to one worker thread
 * (energy-worker.ts), which reads, computes and stores with a database pool of its own.
 *
 * Durability is Postgres's, not this class's: a run owing figures is marked (run_energy_dirty)
 * in the transaction that made it owe them, and the mark is cleared only by a refresh that saw
 * everything it stood for. A worker that dies (a crash, its heap limit) fails the refreshes in
 * progress — their runs stay marked — and is started afresh for the next; a scheduler that
 * restarts finds the marked runs at its first tick. A refresh is idempotent (storeRunEnergy never
 * replaces figures computed from more batches), so one done twice costs only time.
 *
 * Two refreshes of one run asked for at once are one (the second gets the first's promise).
 * Without the build (dist/energy-worker.js), figures are computed on the event loop, with a warning.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Database } from '@erg/db';
import { refreshRunEnergy } from '@erg/results';
import { ErgError } from '@erg/spec';

/** What the worker is started with. */
export interface EnergyWorkerData {
  databaseUrl: string;
  /** Its pool's size. */
  connections: number;
}

/** To the worker: compute one run's figures; or close its pool and say so. */
export type EnergyRequest = { kind: 'refresh'; id: number; runId: string } | { kind: 'close' };
/** From the worker. */
export type EnergyReply =
  | { kind: 'ready' }
  | { kind: 'done'; id: number; computed: boolean }
  | { kind: 'failed'; id: number; message: string; code: string | null }
  | { kind: 'closed' };

/** A run's recompute failed in the worker (the database, a bug), or the worker stopped under it. */
export class EnergyRefreshError extends ErgError<'ERG_ENERGY_REFRESH_FAILED'> {
  constructor(
    message: string,
    /** The underlying failure's code (e.g. a Postgres SQLSTATE), when it had one. */
    readonly causeCode: string | null = null,
  ) {
    super('ERG_ENERGY_REFRESH_FAILED', message);
  }
}

export interface EnergyRunnerOptions {
  databaseUrl: string;
  /** The worker's heap limit (MiB): a run whose figures need more fails alone, the scheduler's memory untouched. Default 1024. */
  maxHeapMb?: number;
  /** The worker's database connections, and so its refreshes in progress at once. Default 2. */
  connections?: number;
  /** Where figures are computed when the worker's code is not built (tests of the sources without the build): on this thread. */
  fallbackDb?: Database;
  warn?: (message: string) => void;
}

interface Pending {
  runId: string;
  resolve: (computed: boolean) => void;
  reject: (err: Error) => void;
}

/** The compiled worker: beside this file in dist/, or in dist/ when the scheduler runs from its TypeScript sources (Jest). */
function workerFile(): string | null {
  for (const candidate of [path.join(__dirname, 'energy-worker.js'), path.resolve(__dirname, '..', 'dist', 'energy-worker.js')]) {
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

export class EnergyRunner {
  private readonly file: string | null;
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private readonly byRun = new Map<string, Promise<boolean>>();
  private nextId = 1;
  private started = 0;
  private closed = false;

  constructor(private readonly options: EnergyRunnerOptions) {
    this.file = workerFile();
    if (!this.file) options.warn?.('energy-worker.js not found (build the scheduler: npx turbo run build); energy figures are computed on the event loop');
  }

  /** Worker threads started so far (a replaced one counts again): for tests and metrics. */
  get workersStarted(): number {
    return this.started;
  }

  /** Computes and stores one run's figures; resolves whether any were computed (false: nothing to compute from). */
  refresh(runId: string): Promise<boolean> {
    const running = this.byRun.get(runId);
    if (running) return running;
    const promise = this.start(runId).finally(() => this.byRun.delete(runId));
    this.byRun.set(runId, promise);
    return promise;
  }

  /** Fails what is in progress, closes the worker's pool and ends its thread. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    this.failAll(new EnergyRefreshError('the energy runner was closed'));
    if (!worker) return;
    // Its listeners stay (they ignore a worker no longer current): removeAllListeners() would also
    // remove Node's own, which keep the worker's message port flowing, and 'closed' would never come.
    const closed = new Promise<void>((resolve) => {
      worker.on('message', (reply: EnergyReply) => reply.kind === 'closed' && resolve());
      worker.once('exit', () => resolve());
    });
    worker.ref();
    worker.postMessage({ kind: 'close' } satisfies EnergyRequest);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, 10_000)))]);
    clearTimeout(timer);
    await worker.terminate();
  }

  private start(runId: string): Promise<boolean> {
    if (this.closed) return Promise.reject(new EnergyRefreshError('the energy runner is closed'));
    if (!this.file) {
      if (!this.options.fallbackDb) return Promise.reject(new EnergyRefreshError('energy-worker.js is not built and no database was given to compute on this thread'));
      return refreshRunEnergy(this.options.fallbackDb, runId).then((r) => r !== null);
    }
    const worker = this.worker ?? this.spawn();
    const id = this.nextId++;
    return new Promise<boolean>((resolve, reject) => {
      this.pending.set(id, { runId, resolve, reject });
      // Held while it works for someone: an idle worker must not keep a finished process alive.
      worker.ref();
      worker.postMessage({ kind: 'refresh', id, runId } satisfies EnergyRequest);
    });
  }

  private spawn(): Worker {
    const data: EnergyWorkerData = { databaseUrl: this.options.databaseUrl, connections: this.options.connections ?? 2 };
    const worker = new Worker(this.file!, { workerData: data, resourceLimits: { maxOldGenerationSizeMb: this.options.maxHeapMb ?? 1024 } });
    this.worker = worker;
    this.started++;
    worker.on('message', (reply: EnergyReply) => {
      if (reply.kind !== 'done' && reply.kind !== 'failed') return;
      const pending = this.pending.get(reply.id);
      if (!pending) return;
      this.pending.delete(reply.id);
      if (reply.kind === 'done') pending.resolve(reply.computed);
      else pending.reject(new EnergyRefreshError(`computing run ${pending.runId}'s energy failed: ${reply.message}`, reply.code));
      if (this.pending.size === 0) worker.unref();
    });
    // A worker that dies fails what it was doing (those runs stay marked) and is replaced on the next refresh.
    const died = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.failAll(new EnergyRefreshError(`the energy worker stopped (${why}); the run stays due and is tried again`));
      void worker.terminate();
    };
    worker.on('error', (err) => died((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY' ? `it needed more than ${this.options.maxHeapMb ?? 1024} MiB` : err.message));
    worker.on('exit', (code) => died(`exit code ${code}`));
    return worker;
  }

  private failAll(err: Error): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(err);
  }
}
