import { open, type FileHandle } from 'node:fs/promises';
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { PARQUET_COLUMNS } from './layout';

/**
 * samples.parquet: every sample of every run, one row each (run, node, sensor, t, v), written with
 * hyparquet-writer, one run after another. A tar member's size comes before its bytes, and this
 * file's size is known only once the last run is in, so it is written to a file of its own
 * (`path`, in the caller's temporary folder) and added to the archive last. One row group is
 * encoded at a time: the writer hands its bytes to the file, and the event loop is free, between
 * row groups.
 */

/** Rows per row group: encoding one takes about 10 ms of the event loop here. */
export const PARQUET_ROW_GROUP_ROWS = 32_768;

/** The file's schema: every column required; strings UTF-8, numbers doubles (the samples as stored). */
const SCHEMA = [
  { name: 'root', num_children: PARQUET_COLUMNS.length },
  { name: 'run', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
  { name: 'node', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
  { name: 'sensor', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
  { name: 't', type: 'DOUBLE', repetition_type: 'REQUIRED' },
  { name: 'v', type: 'DOUBLE', repetition_type: 'REQUIRED' },
] as const;

/** hyparquet-writer's ByteWriter with the flush its ParquetWriter calls after each row group (its Writer type has it). */
type FlushingWriter = ByteWriter & { flush?: () => Promise<void> };

/** One node's sensor's samples of a run. */
export interface ParquetSeries {
  node: string;
  sensor: string;
  t: ArrayLike<number>;
  v: ArrayLike<number>;
}

export class SamplesParquet {
  private readonly writer: FlushingWriter;
  private readonly parquet: ParquetWriter;

  private constructor(
    readonly path: string,
    private readonly file: FileHandle,
    createdBy: string,
  ) {
    const writer: FlushingWriter = new ByteWriter();
    // Each row group's bytes go to the file as soon as it is encoded; the buffer starts again.
    writer.flush = async () => {
      await this.file.write(writer.getBytes());
      writer.index = 0;
      await yieldLoop();
    };
    writer.finish = () => writer.flush!();
    this.writer = writer;
    this.parquet = new ParquetWriter({ writer, schema: SCHEMA as never, codec: 'SNAPPY', createdBy });
  }

  /** A new, empty samples file at `path` (overwritten if there is one). */
  static async create(path: string, createdBy: string): Promise<SamplesParquet> {
    return new SamplesParquet(path, await open(path, 'w'), createdBy);
  }

  /** Appends a run's samples: its series in the order given. */
  async addRun(runId: string, series: readonly ParquetSeries[]): Promise<void> {
    const rows = series.reduce((n, s) => n + s.t.length, 0);
    if (rows === 0) return;
    const run = new Array<string>(rows).fill(runId);
    const node = new Array<string>(rows);
    const sensor = new Array<string>(rows);
    const t = new Float64Array(rows);
    const v = new Float64Array(rows);
    let at = 0;
    for (const s of series) {
      node.fill(s.node, at, at + s.t.length);
      sensor.fill(s.sensor, at, at + s.t.length);
      t.set(s.t, at);
      v.set(s.v, at);
      at += s.t.length;
    }
    await this.parquet.write({
      columnData: [
        { name: 'run', data: run },
        { name: 'node', data: node },
        { name: 'sensor', data: sensor },
        { name: 't', data: t },
        { name: 'v', data: v },
      ],
      rowGroupSize: PARQUET_ROW_GROUP_ROWS,
    });
  }

  /** Writes the footer and closes the file; returns its size in bytes. */
  async finish(): Promise<number> {
    try {
      await this.parquet.finish();
      return this.writer.offset;
    } finally {
      await this.file.close();
    }
  }

  /** Closes the file without a footer (the bundle failed). */
  async abandon(): Promise<void> {
    await this.file.close().catch(() => undefined);
  }
}
