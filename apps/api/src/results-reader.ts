import { readResultsStamp, type Database } from '@erg/db';
import type { CampaignFigureOptions } from '@erg/results';
import { errors } from './errors';
import type { ExpensiveReads } from './expensive-reads';
import { OffloadBusy, OffloadTooCostly, type Offload } from './offload';
import { campaignResultsBody } from './results-answer';
import type { ResultsCache } from './results-cache';

/**
 * Where a results answer came from (/metrics erg_campaign_results_total), as the glossary of
 * ResultsReader names them.
 */
export type ResultsSource = 'cache' | 'joined' | 'worker' | 'inline';

export interface ResultsReaderDeps {
  db: Database;
  /** The results workers (script results-worker.js); not `available`: computed inline. */
  workers: Offload;
  cache: ResultsCache;
  places: ExpensiveReads;
  /** Told where each answer came from (/metrics erg_campaign_results_total). */
  answered?: (source: ResultsSource) => void;
  /** Told how a worker read each computation's inputs (/metrics erg_results_inputs_read_total). */
  inputsRead?: (read: 'whole' | 'changes') => void;
  /** Test seam: awaited when a computation has its place, before it starts. */
  beforeCompute?: (campaignId: string) => Promise<void>;
}

/** The path where a search campaign's unmeasured candidates are paged through (countUnmeasured's `list`). */
export function unmeasuredListPath(campaignId: string): string {
  return `/v1/campaigns/${campaignId}/configurations?measured=false`;
}

/**
 * GET /v1/campaigns/{id}/results, read as cheaply as the answer allows. Glossary:
 * - stamp: the campaign's results stamp (packages/db results-stamp.ts), read first, one short
 *   query; it changes with anything the results are computed from.
 * - cache: answers kept under the stamp they were computed at (results-cache.ts); served while the
 *   stamp is the same (`cache`), so a read after any change computes again.
 * - joined: a read asking for results another request is computing, at the same stamp, waits for
 *   that computation instead of starting one.
 * - computed: in a results worker thread (`worker`: results-answer.ts reads, computes and
 *   serialises there, and the bytes come back without a copy), or on the event loop when no worker
 *   is available (`inline`). Each computation holds one of its token's expensive-read places
 *   (expensive-reads.ts) until it is done; a token without a free place is refused (429).
 * An answer computed from data newer than its stamp is kept under the older stamp: the next read
 * sees a newer stamp and computes again, so a kept answer is never older than its stamp says.
 */
export class ResultsReader {
  /** Computations in progress, by cache key and stamp. */
  private readonly computing = new Map<string, Promise<Buffer>>();

  constructor(private readonly deps: ResultsReaderDeps) {}

  /** The campaign's results as JSON bytes (404 when there is no such campaign); `holder`: the token asking. */
  async read(campaignId: string, options: CampaignFigureOptions, holder: string): Promise<{ body: Buffer; source: ResultsSource }> {
    const stamp = await readResultsStamp(this.deps.db, campaignId);
    if (stamp === null) throw errors.notFound('campaign', campaignId);
    const key = cacheKey(campaignId, options);
    const kept = this.deps.cache.get(key, stamp);
    if (kept) return this.answer(kept, 'cache');
    const flight = `${key}\n${stamp}`;
    const running = this.computing.get(flight);
    if (running) return this.answer(await running, 'joined');
    const release = this.deps.places.tryAcquire(holder);
    if (!release) throw errors.expensiveReadsBusy(this.deps.places.perHolder);
    const source = this.deps.workers.available ? 'worker' : 'inline';
    const computation = this.compute(campaignId, options)
      .then((body) => {
        this.deps.cache.set(key, stamp, body);
        return body;
      })
      .finally(() => {
        this.computing.delete(flight);
        release();
      });
    this.computing.set(flight, computation);
    return this.answer(await computation, source);
  }

  private answer(body: Buffer, source: ResultsSource): { body: Buffer; source: ResultsSource } {
    this.deps.answered?.(source);
    return { body, source };
  }

  private async compute(campaignId: string, options: CampaignFigureOptions): Promise<Buffer> {
    await this.deps.beforeCompute?.(campaignId);
    const list = unmeasuredListPath(campaignId);
    if (!this.deps.workers.available) return toBuffer(await campaignResultsBody(this.deps.db, campaignId, options, list));
    try {
      const { body, inputsRead } = await this.deps.workers.run({ kind: 'results', campaignId, options, list });
      this.deps.inputsRead?.(inputsRead);
      return toBuffer(body);
    } catch (err) {
      if (err instanceof OffloadBusy) throw errors.resultsBusy();
      if (err instanceof OffloadTooCostly) throw errors.tooCostly('results of this campaign', err.why);
      throw err;
    }
  }
}

/** One cache entry per campaign and way of asking (the same question asked the same way). */
function cacheKey(campaignId: string, options: CampaignFigureOptions): string {
  return [campaignId, options.groupBy ?? 'configuration', options.objectives?.join(',') ?? 'default', options.validOnly ? 'valid' : 'all'].join('|');
}

/** The bytes as a Buffer over the same memory (no copy). */
function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
