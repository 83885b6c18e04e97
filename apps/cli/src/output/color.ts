// A tiny colour helper instead of a dependency: the CLI needs five styles, and one decision about
// whether to use them at all (see `colorEnabled`).

export interface Colors {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

function sgr(open: number, close: number): (text: string) => string {
  return (text) => (text === '' ? text : `\x1b[${open}m${text}\x1b[${close}m`);
}

const ON: Colors = { bold: sgr(1, 22), dim: sgr(2, 22), red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39), cyan: sgr(36, 39) };
const identity = (text: string) => text;
const OFF: Colors = { bold: identity, dim: identity, red: identity, green: identity, yellow: identity, cyan: identity };

export function colors(enabled: boolean): Colors {
  return enabled ? ON : OFF;
}

/**
 * Colour is for people at a terminal: off with `--no-color`; on when FORCE_COLOR is set (and
 * not "0"), e.g. for CI logs that render ANSI; off when NO_COLOR is set (no-color.org); otherwise
 * on exactly when stdout is a TTY, so piped output never carries escape codes.
 */
export function colorEnabled(options: { flag: boolean; isTTY: boolean; noColor?: string | undefined; forceColor?: string | undefined }): boolean {
  if (!options.flag) return false;
  if (options.forceColor !== undefined && options.forceColor !== '0' && options.forceColor !== 'false') return true;
  if (options.noColor !== undefined && options.noColor !== '') return false;
  return options.isTTY;
}

// Matches SGR and cursor/erase sequences (CSI … final byte).
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** `text` without ANSI escape sequences. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** Columns `text` takes on a terminal: code points, escape sequences excluded. */
export function displayWidth(text: string): number {
  return [...stripAnsi(text)].length;
}
