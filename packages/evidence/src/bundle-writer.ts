import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { createGzip } from 'node:zlib';
import { pack as tarPack, type Pack } from 'tar-stream';
import type { RunFigureInputs } from '@erg/results/run-figures';
import { stringifyExact } from './exact-json';
import { BUNDLE_FILES, BUNDLE_FORMAT, readmeText, runFile, samplesFile, type Manifest, type ManifestFile } from './layout';
import { SamplesParquet } from './samples-parquet';
import { marksCsv, samplesCsv, type SampleColumn } from './samples-csv';

/**
 * Writes a campaign's evidence bundle (layout.ts) as a stream, from an EvidenceSource: the API
 * reads it from the database, tests from memory. Runs are read and written one after another, so
 * a bundle holds one run's samples in memory at a time whatever the campaign's size; members are
 * compressed (zlib, off the event loop) and hashed as they are written, and the archive is only
 * produced as fast as its reader takes it (each member waits for the stream to drain).
 */

/** What a bundle is written from: everything it holds, read when the writer asks. */
export interface EvidenceSource {
  campaignId: string;
  /** The version of the erg writing it (manifest.json, README.txt). */
  ergVersion: string;
  /** The campaign (campaign.json), its spec as stored (spec.json), and as submitted when erg kept it. */
  campaign(): Promise<{ view: unknown; specStored: unknown; specSubmitted: string | null }>;
  /**
   * The text of campaign-inputs.json — everything the campaign's results are computed from, as
   * exact JSON (stringifyExact, indented by 1) — and of results.json: the results computed from
   * exactly those inputs, as the JSON the results route answers with its defaults. Written as they
   * are: the API makes both off its event loop, and hands over the route's own bytes.
   */
  campaignResults(): Promise<{ inputs: string | Uint8Array; results: string | Uint8Array }>;
  /** The campaign's runs, in its run order (position). */
  runIds(): Promise<string[]>;
  /** A run as its route shows it, with its events and position (run.json). */
  run(runId: string): Promise<unknown>;
  /** Everything its figures are computed from, with every sample; null: none (no workload window). */
  runInputs(runId: string): Promise<RunFigureInputs | null>;
  /** Its stored figures as the energy route shows them; null: none. */
  runEnergy(runId: string): Promise<unknown | null>;
}

/** How a bundle is written. */
export interface BundleOptions {
  /** Where samples.parquet is written before it joins the archive (default: the system's). */
  tmpDir?: string;
  /** The bundle's creation time (default: now). */
  now?: Date;
}

/**
 * The bundle as a stream of tar bytes. Fails (the stream errors) when a read fails; the archive
 * is then cut short, without a manifest, which any reader refuses.
 */
export function bundleStream(source: EvidenceSource, options: BundleOptions = {}): Readable {
  const tar = tarPack();
  const out = new PassThrough();
  // The archive's errors are the reader's, through `out` (a no-op once it is gone): a reader that
  // went away makes the pipe destroy the archive with an error, which unheard would end the process.
  tar.on('error', (err: Error) => out.destroy(err));
  tar.pipe(out);
  const writer = new BundleWriter(tar, source, options);
  writer.write().then(
    () => tar.finalize(),
    (err: unknown) => {
      out.destroy(err as Error);
      tar.destroy(err as Error);
    },
  );
  // The reader went away (a closed connection): stop reading the database for it.
  out.once('close', () => writer.cancel());
  return out;
}

/** Why a bundle stopped: its reader went away. */
class BundleCancelled extends Error {
  override readonly name = 'BundleCancelled';
}

class BundleWriter {
  private readonly files: ManifestFile[] = [];
  private readonly mtime: Date;
  private cancelled = false;
  /** Rejects with BundleCancelled when the reader goes away. */
  private readonly stopped: Promise<never>;
  private stop!: () => void;

  constructor(
    private readonly tar: Pack,
    private readonly source: EvidenceSource,
    private readonly options: BundleOptions,
  ) {
    this.mtime = options.now ?? new Date();
    this.stopped = new Promise<never>((_resolve, reject) => {
      this.stop = () => reject(new BundleCancelled("the bundle's reader went away"));
    });
    this.stopped.catch(() => undefined); // raced by each wait; cancelled between waits, nobody awaits it
  }

  cancel(): void {
    this.cancelled = true;
    this.stop();
  }

  /** Top-level files, each run, samples.parquet, then the manifest: the order a streaming reader finds them in. */
  async write(): Promise<void> {
    const { source } = this;
    await this.add(BUNDLE_FILES.readme, readmeText(source.campaignId, source.ergVersion));
    const campaign = await source.campaign();
    await this.add(BUNDLE_FILES.campaign, json(campaign.view));
    if (campaign.specSubmitted !== null) await this.add(BUNDLE_FILES.specSubmitted, campaign.specSubmitted);
    await this.add(BUNDLE_FILES.specStored, json(campaign.specStored));
    const { inputs, results } = await source.campaignResults();
    await this.add(BUNDLE_FILES.campaignInputs, bytesOf(inputs));
    await this.add(BUNDLE_FILES.results, bytesOf(results));
    const runIds = await source.runIds();
    const tmp = await mkdtemp(path.join(this.options.tmpDir ?? tmpdir(), 'erg-evidence-'));
    try {
      const parquet = await SamplesParquet.create(path.join(tmp, BUNDLE_FILES.samplesParquet), `erg ${source.ergVersion}`);
      try {
        for (const runId of runIds) await this.addRun(runId, parquet);
      } catch (err) {
        await parquet.abandon();
        throw err;
      }
      const bytes = await parquet.finish();
      await this.addFile(BUNDLE_FILES.samplesParquet, parquet.path, bytes);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
    const manifest: Manifest = {
      format: BUNDLE_FORMAT, ergVersion: source.ergVersion, campaignId: source.campaignId, createdAt: this.mtime.toISOString(), runs: runIds, files: this.files,
    };
    await this.add(BUNDLE_FILES.manifest, json(manifest), { listed: false });
  }

  /**
   * One run's files: run.json; where it has a window, its inputs without the samples
   * (inputs.json, exact JSON), its samples per node (CSV.gz, and into samples.parquet) and its
   * marks; and its stored figures where it has them.
   */
  private async addRun(runId: string, parquet: SamplesParquet): Promise<void> {
    const { source } = this;
    await this.add(runFile(runId, 'run'), json(await source.run(runId)));
    const inputs = await source.runInputs(runId);
    if (inputs !== null) {
      const { series, ...rest } = inputs;
      // The samples travel as CSV; inputs.json says which series there were, in their order.
      const described = { ...rest, series: series.map((s) => ({ node: s.node, sensor: s.sensor, samples: s.t.length })) };
      await this.add(runFile(runId, 'inputs'), stringifyExact(described, 1));
      const byNode = new Map<string, SampleColumn[]>();
      for (const s of series) {
        const list = byNode.get(s.node);
        if (list) list.push(s);
        else byNode.set(s.node, [s]);
      }
      for (const [node, columns] of byNode) await this.add(samplesFile(runId, node), await gzip(samplesCsv(columns)));
      await parquet.addRun(runId, series);
      await this.add(runFile(runId, 'marks'), await gzip([marksCsv(inputs.marks)]));
    }
    const energy = await source.runEnergy(runId);
    if (energy !== null) await this.add(runFile(runId, 'energy'), json(energy));
  }

  /**
   * Adds one member, hashed and listed in the manifest (unless `listed` is false: the manifest
   * itself). Hashed and written a slice at a time, other requests running in between: the inputs of
   * 100,000 runs are about 80 MB, which hashed at once held the event loop for most of a second.
   */
  private async add(name: string, content: string | Buffer, options: { listed?: boolean } = {}): Promise<void> {
    const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    const hash = createHash('sha256');
    await this.entry(name, data.length, async (write) => {
      for (let at = 0; at < data.length; at += SLICE_BYTES) {
        const slice = data.subarray(at, at + SLICE_BYTES);
        hash.update(slice);
        await write(slice);
        if (at + SLICE_BYTES < data.length) await yieldLoop();
      }
    });
    if (options.listed !== false) this.files.push({ path: name, sha256: hash.digest('hex'), bytes: data.length });
  }

  /** Adds a member from a file of `bytes` bytes, read and hashed as a stream. */
  private async addFile(name: string, file: string, bytes: number): Promise<void> {
    const hash = createHash('sha256');
    await this.entry(name, bytes, async (write) => {
      for await (const chunk of createReadStream(file)) {
        hash.update(chunk as Buffer);
        await write(chunk as Buffer);
      }
    });
    this.files.push({ path: name, sha256: hash.digest('hex'), bytes });
  }

  /** One tar member of `size` bytes, its data written by `fill`; each write waits while the archive's reader is behind. */
  private async entry(name: string, size: number, fill: (write: (chunk: Buffer) => Promise<void>) => Promise<void>): Promise<void> {
    if (this.cancelled) throw new BundleCancelled("the bundle's reader went away");
    let done!: (err?: Error | null) => void;
    const finished = new Promise<void>((resolve, reject) => {
      done = (err) => (err ? reject(err) : resolve());
    });
    finished.catch(() => undefined); // awaited below, unless `fill` fails first
    const stream = this.tar.entry({ name, size, mode: 0o644, mtime: this.mtime, type: 'file' }, (err) => done(err));
    await fill(async (chunk) => {
      if (!stream.write(chunk)) await this.unlessCancelled(new Promise<void>((resolve) => stream.once('drain', () => resolve())));
    });
    // A streamx Writable (typed as Node's): end() without arguments, which streamx would write.
    (stream as unknown as { end(): void }).end();
    await this.unlessCancelled(finished);
    // Between members other requests run, however fast the reader takes them.
    await yieldLoop();
  }

  /** `wait`, or BundleCancelled as soon as the reader goes away (a destroyed archive never drains). */
  private unlessCancelled(wait: Promise<void>): Promise<void> {
    return Promise.race([wait, this.stopped]);
  }
}

/** What add() hashes and writes between two turns of the event loop (about a millisecond of SHA-256). */
const SLICE_BYTES = 1024 * 1024;
const json = (value: unknown) => `${JSON.stringify(value, null, 1)}\n`;
/** Text, or bytes as a Buffer over the same memory (no copy). */
const bytesOf = (content: string | Uint8Array): string | Buffer => (typeof content === 'string' ? content : Buffer.from(content.buffer, content.byteOffset, content.byteLength));

/** Text chunks gzip'd (zlib works off the event loop; between chunks it is free). */
async function gzip(chunks: Iterable<string>): Promise<Buffer> {
  const gz = createGzip();
  const parts: Buffer[] = [];
  gz.on('data', (b: Buffer) => parts.push(b));
  const ended = new Promise<void>((resolve, reject) => {
    gz.once('end', () => resolve());
    gz.once('error', reject);
  });
  for (const chunk of chunks) {
    if (!gz.write(chunk)) await new Promise<void>((resolve) => gz.once('drain', () => resolve()));
    await yieldLoop();
  }
  gz.end();
  await ended;
  return Buffer.concat(parts);
}
