/**
 * Slurm's hostlist expressions (squeue/sacct `NodeList`): `gh[001-004,007],login1`,
 * `rack[1-2]-node[01-02]`. Zero padding follows the range's first number, as Slurm writes it.
 */

/** More names than any job holds: an expression expanding past this is refused, not expanded. */
export const MAX_HOSTLIST_NAMES = 100_000;

/** The node names of a hostlist expression, in order; null when it is malformed or names more than MAX_HOSTLIST_NAMES. */
export function expandHostlist(expression: string): string[] | null {
  const out: string[] = [];
  for (const item of splitTopLevel(expression.trim())) {
    if (item === '') continue;
    if (!expandItem(item, out)) return null;
  }
  return out;
}

/** Splits at commas outside brackets. */
function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '[') depth++;
    else if (s[i] === ']') depth--;
    else if (s[i] === ',' && depth === 0) {
      parts.push(s.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

/** Expands one item (its first bracket group, then the rest recursively) into `out`; false when malformed or too many. */
function expandItem(item: string, out: string[]): boolean {
  const open = item.indexOf('[');
  if (open < 0) {
    if (item.includes(']') || out.length >= MAX_HOSTLIST_NAMES) return false;
    out.push(item);
    return true;
  }
  const close = item.indexOf(']', open);
  if (close < 0) return false;
  const prefix = item.slice(0, open);
  const rest = item.slice(close + 1);
  for (const range of item.slice(open + 1, close).split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(range);
    if (!m) return false;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from || to - from >= MAX_HOSTLIST_NAMES) return false;
    const width = m[1]!.length;
    for (let n = from; n <= to; n++) {
      if (!expandItem(`${prefix}${String(n).padStart(width, '0')}${rest}`, out)) return false;
    }
  }
  return true;
}
