import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { FastifyBaseLogger } from 'fastify';
import { ErgError, type DecodedBatch } from '@erg/spec';
import type { CampaignFigureOptions } from '@erg/results';
import type { SizeLimits, ValidateCampaignResult } from '@erg/sweep';
import type { ValidateSuiteResult } from '@erg/suites/validate';
import { errors } from './errors';

/**
 * Worker threads for the work too large for the event loop: request bodies to decode and validate
 * (offload-worker.js) — campaign specs and suites over OFFLOAD_ABOVE.spec (YAML parses at about
 * 1-3 µs a byte), telemetry batches that cost more than OFFLOAD_ABOVE.telemetry to decode
 * (telemetryDecodeCost: bytes, and each mark or series as 256 more; JSON.parse takes about 8 ms a
 * MiB) — and campaigns' results to compute (results-worker.js, a pool of its own: app.ts). While a
 * worker works, the API keeps answering everyone else.
 *
 * Glossary
 * - job: one body to decode and validate, or one campaign's results to compute (OffloadJob); its
 *   answer is what the inline code would have returned (ValidateCampaignResult, ValidateSuiteResult,
 *   DecodedBatch, the results' JSON bytes).
 * - slot: one worker and the job it runs, if any. A slot runs one job at a time; jobs wait in
 *   one FIFO queue of at most `maxQueue`, beyond which `run` refuses at once (OffloadBusy).
 * - A job that takes longer than `timeoutMs`, or that makes its worker run out of heap
 *   (`maxHeapMb`), ends that worker: the job fails with OffloadTooCostly and the slot starts a
 *   fresh worker for the next one.
 */

export type OffloadJob =
  /** `yaml`: the body is YAML text; otherwise the parsed JSON value. */
  | { kind: 'campaign'; body: unknown; yaml: boolean; limits: SizeLimits }
  | { kind: 'suite'; body: unknown; yaml: boolean; limits: SizeLimits }
  /** UTF-8 JSON text; its buffer is transferred to the worker (not copied). */
  | { kind: 'telemetry'; body: Uint8Array; bounds: { minT: number; maxT: number } }
  /** A campaign's results, read and computed by the worker (results-worker.ts); `list`: the path of its unmeasured candidates. */
  | { kind: 'results'; campaignId: string; options: CampaignFigureOptions; list: string }
  /** An evidence bundle's campaign-inputs.json, and its results.json computed from them where `results` says how (evidence-worker.ts). */
  | { kind: 'campaign-files'; campaignId: string; results: { options: CampaignFigureOptions; list: string } | null };

/** A campaign's results as the JSON the API answers with (UTF-8), transferred back without a copy. */
export interface ResultsBody {
  body: Uint8Array;
  /** How the worker read the campaign's inputs (CampaignInputsKeeper): whole, or only the runs that changed. */
  inputsRead: 'whole' | 'changes';
}

/** A campaign's figure inputs as exact JSON (campaign-inputs.json), and the results computed from them (results.json) when asked for; UTF-8, transferred back without a copy. */
export interface CampaignFiles {
  inputs: Uint8Array;
  results: Uint8Array | null;
}

export interface OffloadResults {
  campaign: ValidateCampaignResult;
  suite: ValidateSuiteResult;
  telemetry: DecodedBatch;
  results: ResultsBody;
  'campaign-files': CampaignFiles;
}

/** A failed job's `code` is its error's (a pg SQLSTATE, a socket's), so that a database away still reads as one. */
export type OffloadReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string; code?: string } | { ready: true };

export interface OffloadOptions {
  /** Worker threads; 0 runs every job inline (`available` is false). */
  workers: number;
  timeoutMs: number;
  /** Jobs waiting for a worker beyond which `run` refuses. */
  maxQueue: number;
  /** Old-generation heap of each worker, MiB. */
  maxHeapMb: number;
  /** The worker's script, next to this file in dist: offload-worker.js (the default), results-worker.js or evidence-worker.js. */
  script?: string;
  /** Given to every worker as `workerData` (the results workers' database URL). */
  workerData?: unknown;
  /** What a job does, for the refusals: "took longer than 10 s to <task>" (default `validate`). */
  task?: string;
}

/** The queue is full: answer 503 (errors.busy) and let the client retry. */
export class OffloadBusy extends ErgError<'ERG_BUSY'> {
  constructor() {
    super('ERG_BUSY', 'queue full');
  }
}
/** The job ran out of time or memory; `why` says which, for the 422 (errors.tooCostly). */
export class OffloadTooCostly extends ErgError<'ERG_TOO_COSTLY'> {
  constructor(readonly why: string) {
    super('ERG_TOO_COSTLY', why);
  }
}

interface Pending {
  id: number;
  job: OffloadJob;
  resolve(result: unknown): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  /** Set once the worker has loaded its modules: a job's time starts then, not at the worker's start. */
  ready: boolean;
  current: (Pending & { timer: NodeJS.Timeout | null }) | null;
}

/**
 * The compiled worker: next to this file in dist, or in dist when the API runs from its
 * TypeScript sources (tests), so it needs the build (`npx turbo run build`).
 */
function workerFile(script: string): string | null {
  for (const candidate of [path.join(__dirname, script), path.resolve(__dirname, '..', 'dist', script)]) {
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

export class Offload {
  private readonly file: string | null;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly options: OffloadOptions,
    private readonly log: FastifyBaseLogger,
  ) {
    const script = options.script ?? 'offload-worker.js';
    this.file = options.workers > 0 ? workerFile(script) : null;
    if (options.workers > 0 && !this.file) {
      log.warn(`${script} not found (build the API: npx turbo run build); its work is done on the event loop`);
    }
  }

  private get task(): string {
    return this.options.task ?? 'validate';
  }

  /** Workers started so far (they start on first need, or all at once with `warm`). */
  get started(): number {
    return this.slots.length;
  }

  /** Whether jobs run in worker threads; when false the caller runs them inline. */
  get available(): boolean {
    return this.file !== null && !this.closed;
  }

  /** Runs a job in a worker. Rejects with OffloadBusy (queue full) or OffloadTooCostly (time or memory). */
  run<K extends OffloadJob['kind']>(job: Extract<OffloadJob, { kind: K }>): Promise<OffloadResults[K]> {
    if (!this.available) return Promise.reject(new Error('offload workers are not available'));
    const idle = this.slots.length < this.options.workers || this.slots.some((s) => s.current === null);
    if (!idle && this.queue.length >= this.options.maxQueue) return Promise.reject(new OffloadBusy());
    return new Promise<OffloadResults[K]>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, job, resolve: resolve as (r: unknown) => void, reject });
      this.dispatch();
    });
  }

  /**
   * Starts every worker now rather than on the first large body: a worker takes about half a
   * second to load its modules, which the first large request would otherwise wait for.
   */
  warm(): void {
    if (!this.available) return;
    while (this.slots.length < this.options.workers) this.startSlot();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.reject(new Error('the API is shutting down'));
    await Promise.all(
      this.slots.map(async (slot) => {
        if (slot.current) {
          if (slot.current.timer) clearTimeout(slot.current.timer);
          slot.current.reject(new Error('the API is shutting down'));
          slot.current = null;
        }
        await slot.worker.terminate();
      }),
    );
  }

  /** Hands queued jobs to idle slots, starting workers up to `workers` on first need. */
  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => s.current === null);
      if (!slot && this.slots.length < this.options.workers) slot = this.startSlot();
      if (!slot) return;
      this.assign(slot, this.queue.shift()!);
    }
  }

  private startTimer(slot: Slot): void {
    if (!slot.current || slot.current.timer || !slot.ready) return;
    slot.current.timer = setTimeout(() => this.fail(slot, new OffloadTooCostly(`took longer than ${this.options.timeoutMs / 1000} s to ${this.task}`)), this.options.timeoutMs);
  }

  private assign(slot: Slot, pending: Pending): void {
    slot.current = { ...pending, timer: null };
    this.startTimer(slot);
    let job = pending.job;
    let transfer: ArrayBuffer[] = [];
    if (job.kind === 'telemetry') {
      // Transfer the body's memory rather than copy it; a view into a larger (pooled) buffer is copied first.
      const own = job.body.byteOffset === 0 && job.body.byteLength === job.body.buffer.byteLength ? job.body : new Uint8Array(job.body);
      job = { ...job, body: own };
      transfer = [own.buffer as ArrayBuffer];
    }
    slot.worker.postMessage({ id: pending.id, job }, transfer);
  }

  private startSlot(): Slot {
    const worker = new Worker(this.file!, { resourceLimits: { maxOldGenerationSizeMb: this.options.maxHeapMb }, workerData: this.options.workerData });
    const slot: Slot = { worker, ready: false, current: null };
    worker.on('message', (reply: OffloadReply) => {
      if ('ready' in reply) {
        slot.ready = true;
        this.startTimer(slot);
        return;
      }
      const current = slot.current;
      if (!current || current.id !== reply.id) return;
      if (current.timer) clearTimeout(current.timer);
      slot.current = null;
      if (reply.ok) current.resolve(reply.result);
      else current.reject(Object.assign(new Error(reply.error), reply.code === undefined ? {} : { code: reply.code }));
      this.dispatch();
    });
    worker.on('error', (err) => {
      const outOfMemory = (err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
      this.fail(slot, outOfMemory ? new OffloadTooCostly(`needed more than ${this.options.maxHeapMb} MiB of memory to ${this.task}`) : err);
    });
    worker.on('exit', () => {
      if (slot.current) this.fail(slot, new Error(`the worker (${this.options.script ?? 'offload-worker.js'}) exited`));
    });
    // An idle worker must not keep a finished process alive.
    worker.unref();
    this.slots.push(slot);
    return slot;
  }

  /** Ends the slot's job with `err` and replaces its worker (whatever it was doing is abandoned). */
  private fail(slot: Slot, err: Error): void {
    const current = slot.current;
    slot.current = null;
    if (current) {
      if (current.timer) clearTimeout(current.timer);
      current.reject(err);
    }
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    slot.worker.removeAllListeners();
    // A late 'error' from a worker being terminated must not become an uncaught exception.
    slot.worker.on('error', () => undefined);
    void slot.worker.terminate();
    if (!this.closed) this.dispatch();
  }
}

/**
 * Runs `job` in a worker when its body is larger than `above` bytes (`bytes`: its size, or what
 * decoding it costs in bytes: telemetryDecodeCost) and workers are available, else `inline()` on
 * the event loop (small bodies cost less than the hand-off). Pool failures
 * become API errors: a full queue 503, a job out of time or memory 422 naming `what`.
 */
export async function runSized<K extends OffloadJob['kind']>(
  offload: Offload,
  job: Extract<OffloadJob, { kind: K }>,
  bytes: number,
  above: number,
  what: string,
  inline: () => OffloadResults[K],
): Promise<OffloadResults[K]> {
  if (bytes <= above || !offload.available) return inline();
  try {
    return await offload.run(job);
  } catch (err) {
    if (err instanceof OffloadBusy) throw errors.busy();
    if (err instanceof OffloadTooCostly) throw errors.tooCostly(what, err.why);
    throw err;
  }
}
