import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { createGunzip, gunzipSync } from 'node:zlib';
import { extract as tarExtract } from 'tar-stream';
import type { CampaignFigureInputs } from '@erg/results/campaign-figures';
import type { FigureSeries, RunFigureInputs } from '@erg/results/run-figures';
import { parseExact } from './exact-json';
import { BUNDLE_FILES, Manifest, runFile, samplesFile } from './layout';
import { CsvError, parseSamplesCsv } from './samples-csv';

/**
 * Reads an evidence bundle (layout.ts) from a file: every member's sha256 and size, and the
 * contents of all but samples.parquet (a copy of the CSVs' samples, which only its hash checks),
 * then the bundle's parts on demand: the manifest, a run's inputs with its samples (as
 * runFiguresOf takes them), its stored figures, the campaign's inputs and results. A bundle
 * that gzip'd as a whole (`.tar.gz`) reads the same. For `erg verify` and tests; notebooks use
 * erg.py's open_bundle.
 */

/** Why a file cannot be read as a bundle at all (`erg verify` exits 2). */
export class BundleUnreadableError extends Error {
  override readonly name = 'BundleUnreadableError';
}

/** One member as read: its hash and size, and its bytes (none for samples.parquet). */
export interface BundleMember {
  sha256: string;
  bytes: number;
  data: Buffer | null;
}

/** A bundle's members, in archive order. */
export type BundleMembers = Map<string, BundleMember>;

/** Every member of the tar (or tar.gz) archive at `file`. Throws BundleUnreadableError when it is not one. */
export async function readBundleMembers(file: string): Promise<BundleMembers> {
  const members: BundleMembers = new Map();
  const gzipped = await startsWithGzip(file);
  const extract = tarExtract();
  extract.on('entry', (header, stream, next) => {
    const hash = createHash('sha256');
    const keep = header.name.replace(/^(\.\/)+/, '') !== BUNDLE_FILES.samplesParquet;
    const parts: Buffer[] = [];
    let bytes = 0;
    stream.on('data', (data: unknown) => {
      const chunk = data as Buffer;
      hash.update(chunk);
      bytes += chunk.length;
      if (keep) parts.push(chunk);
    });
    stream.on('end', () => {
      // Archives packed again from a folder (`tar -cf b.tar -C dir .`) name their members ./<path>.
      if (header.type === 'file') members.set(header.name.replace(/^(\.\/)+/, ''), { sha256: hash.digest('hex'), bytes, data: keep ? Buffer.concat(parts) : null });
      next();
    });
    stream.resume();
  });
  try {
    const sink = extract as unknown as Writable;
    await (gzipped ? pipeline(createReadStream(file), createGunzip(), sink) : pipeline(createReadStream(file), sink));
  } catch (err) {
    throw new BundleUnreadableError(`${file} is not a tar archive erg can read: ${(err as Error).message}`);
  }
  if (members.size === 0) throw new BundleUnreadableError(`${file} holds no files: it is not an erg evidence bundle`);
  return members;
}

async function startsWithGzip(file: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    throw new BundleUnreadableError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    const head = Buffer.alloc(2);
    const { bytesRead } = await handle.read(head, 0, 2, 0);
    return bytesRead === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    await handle.close();
  }
}

/** Why one file of a readable bundle cannot be used: `erg verify` reports it as a difference. */
export class BundleFileError extends Error {
  override readonly name = 'BundleFileError';

  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message}`);
  }
}

/** A bundle's parts, read from its members on demand. */
export class EvidenceBundle {
  readonly manifest: Manifest;

  constructor(readonly members: BundleMembers) {
    const text = this.text(BUNDLE_FILES.manifest);
    if (text === null) throw new BundleUnreadableError(`no ${BUNDLE_FILES.manifest}: not an erg evidence bundle, or one cut short while it was written`);
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new BundleUnreadableError(`${BUNDLE_FILES.manifest} is not JSON: ${(err as Error).message}`);
    }
    const parsed = Manifest.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new BundleUnreadableError(`${BUNDLE_FILES.manifest} is not an erg evidence manifest this erg reads (${issue.path.join('.') || 'the file'}: ${issue.message})`);
    }
    this.manifest = parsed.data;
  }

  /** A member's text; null when there is no such member. */
  text(path: string): string | null {
    const data = this.members.get(path)?.data;
    return data ? data.toString('utf8') : null;
  }

  /** A JSON member, parsed (exact: with exact JSON's tags read back); null when absent. Throws BundleFileError when it does not parse. */
  json(path: string, options: { exact?: boolean } = {}): unknown {
    const text = this.text(path);
    if (text === null) return null;
    try {
      return options.exact ? parseExact(text) : JSON.parse(text);
    } catch (err) {
      throw new BundleFileError(path, `not JSON (${(err as Error).message})`);
    }
  }

  /**
   * A run's figure inputs with its samples, as runFiguresOf takes them: inputs.json's series in
   * their order, each with its samples from the node's CSV file. Null for a run without inputs.
   */
  runInputs(runId: string): RunFigureInputs | null {
    const inputsPath = runFile(runId, 'inputs');
    const described = this.json(inputsPath, { exact: true }) as (Omit<RunFigureInputs, 'series'> & { series: { node: string; sensor: string }[] }) | null;
    if (described === null) return null;
    if (!Array.isArray(described.series)) throw new BundleFileError(inputsPath, 'no list of series');
    const nodes = new Map<string, Map<string, FigureSeries>>();
    const series: FigureSeries[] = described.series.map(({ node, sensor }) => {
      if (!nodes.has(node)) nodes.set(node, this.nodeSamples(runId, node));
      const found = nodes.get(node)!.get(sensor);
      if (!found) throw new BundleFileError(samplesFile(runId, node), `no samples of ${sensor}, which ${inputsPath} lists`);
      return found;
    });
    return { ...described, series };
  }

  /** A run's samples on one node, by sensor. */
  private nodeSamples(runId: string, node: string): Map<string, FigureSeries> {
    const path = samplesFile(runId, node);
    const member = this.members.get(path);
    if (!member?.data) throw new BundleFileError(path, 'missing');
    let text: string;
    try {
      text = gunzipSync(member.data).toString('utf8');
    } catch (err) {
      throw new BundleFileError(path, `not gzip (${(err as Error).message})`);
    }
    try {
      return new Map(parseSamplesCsv(text).map((c) => [c.sensor, { node, sensor: c.sensor, t: c.t as number[], v: c.v as number[] }]));
    } catch (err) {
      if (err instanceof CsvError) throw new BundleFileError(path, err.message);
      throw err;
    }
  }

  /** The campaign's figure inputs as read when the bundle was written; null when absent. */
  campaignInputs(): CampaignFigureInputs | null {
    return this.json(BUNDLE_FILES.campaignInputs, { exact: true }) as CampaignFigureInputs | null;
  }
}

/** The bundle at `file`. Throws BundleUnreadableError when it is not one erg can read. */
export async function openEvidenceBundle(file: string): Promise<EvidenceBundle> {
  return new EvidenceBundle(await readBundleMembers(file));
}
