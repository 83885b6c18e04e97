/**
 * What a user regex is matched against: each line of a log on its own (docs/campaign-spec.md §
 * metrics). A line is the text up to a `\n`, without it and without a `\r` just before it (so `$`
 * ends a line of a log written with CRLF); the log's last line needs no `\n`. Pure and without
 * package imports, since a regex worker thread loads it.
 *
 * Matching line by line, rather than a whole batch of lines at once, keeps the rule simple (a
 * match never spans lines, `^` and `$` are the line's ends) and lets re2js answer most lines with
 * its DFA's yes or no before anything is captured: about three times faster on a training log.
 */

/**
 * Calls `visit` with the [start, end) character range of each line of `text`, in order, until it
 * returns true.
 */
export function forEachLine(text: string, visit: (start: number, end: number) => boolean | void): void {
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf('\n', start);
    const next = newline < 0 ? text.length : newline + 1;
    let end = newline < 0 ? text.length : newline;
    if (end > start && text.charCodeAt(end - 1) === CR) end--;
    if (visit(start, end) === true) return;
    start = next;
  }
}

/** As forEachLine, from the last line of `text` to its first. */
export function forEachLineFromEnd(text: string, visit: (start: number, end: number) => boolean | void): void {
  // A text that ends with a line end has no empty line after it.
  let next = text.length > 0 && text.charCodeAt(text.length - 1) === LF ? text.length - 1 : text.length;
  while (next >= 0 && text.length > 0) {
    const newline = next === 0 ? -1 : text.lastIndexOf('\n', next - 1);
    const start = newline + 1;
    let end = next;
    if (end > start && text.charCodeAt(end - 1) === CR) end--;
    if (visit(start, end) === true) return;
    if (newline < 0) return;
    next = newline;
  }
}

const CR = 13;
const LF = 10;
