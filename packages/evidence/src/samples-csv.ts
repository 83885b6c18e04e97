import { csvField } from '@erg/format';
import { MARKS_COLUMNS, SAMPLES_COLUMNS } from './layout';

/**
 * The bundle's CSV files: a run's samples on one node (sensor, t, v) and its marks. Numbers are
 * written in the shortest form that parses back to the same double (ECMAScript's Number to
 * String; -0 as "-0", never finite samples' NaN and infinities as nan, inf, -inf), so that a
 * sample read back — by erg verify, or by pandas with float_precision="round_trip" — is the
 * sample stored, bit for bit. Names (sensors, nodes, mark names) never hold a comma, a quote or
 * a line break (their schemas in @erg/spec), so no field is ever quoted; they are written through
 * @erg/format's csvField all the same, which makes a name beginning with `-` (a node or a mark
 * may) inert for spreadsheets by a leading `'`, as every CSV erg writes.
 */

/** One sensor's samples on one node, in time order. */
export interface SampleColumn {
  sensor: string;
  t: ArrayLike<number>;
  v: ArrayLike<number>;
}

/** A double as text that parses back (parseNumber, or Python's float()) to the same double. */
export function numberText(x: number): string {
  if (Object.is(x, -0)) return '-0';
  if (Number.isNaN(x)) return 'nan';
  if (x === Number.POSITIVE_INFINITY) return 'inf';
  if (x === Number.NEGATIVE_INFINITY) return '-inf';
  return String(x);
}

/** The double numberText wrote; NaN-free input gives NaN only for text that is no number. */
export function parseNumber(text: string): number {
  switch (text) {
    case 'nan':
      return Number.NaN;
    case 'inf':
      return Number.POSITIVE_INFINITY;
    case '-inf':
      return Number.NEGATIVE_INFINITY;
    default:
      return text.trim() === '' ? Number.NaN : Number(text);
  }
}

/** Rows formatted per slice: about 5 ms of the event loop each here. */
export const CSV_SLICE_ROWS = 20_000;

/**
 * A node's samples as CSV text, a slice of rows at a time (the writer yields the event loop
 * between slices): the header, then each sensor's samples in time order, sensors in the order given.
 */
export function* samplesCsv(columns: readonly SampleColumn[]): Generator<string> {
  yield `${SAMPLES_COLUMNS.join(',')}\n`;
  for (const c of columns) {
    const sensor = csvField(c.sensor);
    for (let from = 0; from < c.t.length; from += CSV_SLICE_ROWS) {
      const to = Math.min(c.t.length, from + CSV_SLICE_ROWS);
      let text = '';
      for (let i = from; i < to; i++) text += `${sensor},${numberText(c.t[i]!)},${numberText(c.v[i]!)}\n`;
      yield text;
    }
  }
}

/** Why a CSV file of a bundle cannot be read. */
export class CsvError extends Error {
  override readonly name = 'CsvError';
}

/**
 * A samples file's columns, sensors in the order they first appear, samples in file order.
 * Throws CsvError naming the line on a header or a row that is not samplesCsv's.
 */
export function parseSamplesCsv(text: string): SampleColumn[] {
  const lines = text.split('\n');
  if (lines[0] !== SAMPLES_COLUMNS.join(',')) throw new CsvError(`line 1: expected the header ${SAMPLES_COLUMNS.join(',')}`);
  const bySensor = new Map<string, { sensor: string; t: number[]; v: number[] }>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '' && i === lines.length - 1) break;
    const fields = line.split(',');
    const t = parseNumber(fields[1] ?? '');
    const v = parseNumber(fields[2] ?? '');
    if (fields.length !== 3 || fields[0] === '' || (Number.isNaN(t) && fields[1] !== 'nan') || (Number.isNaN(v) && fields[2] !== 'nan')) {
      throw new CsvError(`line ${i + 1}: expected sensor,t,v with two numbers, got ${JSON.stringify(line.slice(0, 80))}`);
    }
    const sensor = fields[0]!;
    let column = bySensor.get(sensor);
    if (!column) bySensor.set(sensor, (column = { sensor, t: [], v: [] }));
    column.t.push(t);
    column.v.push(v);
  }
  return [...bySensor.values()];
}

/** One mark as the bundle writes it (@erg/db RunMarkRecord). */
export interface MarkRow {
  node: string;
  offset: number;
  kind: string;
  name: string;
  t: number;
  clock: string;
  writer: string;
}

/** A run's marks as CSV text: for notebooks (verify reads the marks in inputs.json). */
export function marksCsv(marks: readonly MarkRow[]): string {
  let text = `${MARKS_COLUMNS.join(',')}\n`;
  for (const m of marks) text += `${csvField(m.node)},${m.offset},${csvField(m.kind)},${csvField(m.name)},${numberText(m.t)},${csvField(m.clock)},${csvField(m.writer)}\n`;
  return text;
}
