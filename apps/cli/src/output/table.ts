import { displayWidth } from './color';

export interface Column {
  header: string;
  /** Numbers are right-aligned so that their digits line up; text is left-aligned. */
  align?: 'left' | 'right';
}

/** Pads `text` to `width` columns on the side `align` says. */
export function pad(text: string, width: number, align: 'left' | 'right' = 'left'): string {
  const fill = ' '.repeat(Math.max(0, width - displayWidth(text)));
  return align === 'right' ? fill + text : text + fill;
}

/**
 * An aligned plain-text table: a header row, then one line per row, columns two spaces apart,
 * each as wide as its widest cell. Cells may already carry colour; widths ignore escape codes.
 * Trailing spaces are trimmed so that piped output stays clean.
 */
export function renderTable(columns: readonly Column[], rows: readonly (readonly string[])[], style: { header?: (s: string) => string } = {}): string {
  const widths = columns.map((c, i) => Math.max(displayWidth(c.header), ...rows.map((r) => displayWidth(r[i] ?? ''))));
  const line = (cells: readonly string[]) =>
    columns
      .map((c, i) => pad(cells[i] ?? '', widths[i]!, c.align))
      .join('  ')
      .trimEnd();
  const header = line(columns.map((c) => c.header));
  return [style.header ? style.header(header) : header, ...rows.map(line)].join('\n') + '\n';
}

/** `label  value` lines with the labels padded to one width, for one object (`clusters show`, `status`). */
export function renderFields(fields: readonly (readonly [string, string])[]): string {
  const width = Math.max(...fields.map(([label]) => displayWidth(label)));
  return fields.map(([label, value]) => `${pad(label, width)}  ${value}`.trimEnd()).join('\n') + '\n';
}
