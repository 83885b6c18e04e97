export type CsvValue = string | number | boolean | null | undefined;

/**
 * One CSV field as RFC 4180 wants it: quoted when it holds a comma, a quote, CR or LF (quotes
 * doubled inside), bare otherwise; null, undefined and non-finite numbers are empty.
 */
export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'number' && !Number.isFinite(value) ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Rows of fields as RFC 4180 text: CRLF line ends, the first row being the header. */
export function renderCsv(rows: readonly (readonly CsvValue[])[]): string {
  return rows.map((row) => row.map(csvField).join(',') + '\r\n').join('');
}
