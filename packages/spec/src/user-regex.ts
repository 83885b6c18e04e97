import { RE2JS, RE2JSException, RE2JSSyntaxException } from 're2js';

/**
 * The regular expressions users give erg — metric regexes, the regexes of a campaign's `phases` —
 * are RE2 syntax, compiled here and run by re2js, a pure-JavaScript RE2: matching takes time
 * linear in the text whatever the pattern. (JavaScript's own engine backtracks: `^(a+)+$` against
 * forty `a`s and a `!` would not end in a lifetime.) What RE2 cannot express — lookaround,
 * backreferences — is refused when a spec comes in, with what to write instead.
 *
 * Linear is not free: the time per byte grows with the pattern's program, and a counted
 * repetition is that many copies (`\S{1,1000}` is 2,000 instructions). A pattern whose program
 * would exceed MAX_REGEX_PROGRAM instructions is refused, and so is a spec whose regexes together
 * exceed MAX_SPEC_REGEX_PROGRAM. The size is estimated from the source before anything is
 * compiled, since compiling costs 1-12 µs per instruction and a spec is validated on the API's
 * thread. At run time each regex also has a time budget (the scheduler's metric scan).
 */

/** Longest regex a spec may hold (a metric's, a phase's). */
export const MAX_REGEX_CHARS = 1000;
/** Most instructions one regex may compile to (about `\S{1,1000}\d{1,1000}`). */
export const MAX_REGEX_PROGRAM = 4000;
/**
 * Most instructions all regexes of one spec may compile to together: at the slowest measured
 * (Unicode classes, ~12 µs an instruction) ~120 ms of compiling; a usual spec needs a few hundred.
 */
export const MAX_SPEC_REGEX_PROGRAM = 10_000;
/** RE2's own limit on a counted repetition; beyond it RE2 says so itself. */
const MAX_REPEAT = 1000;

/** `^` and `$` match at the start and end of each line. */
const FLAGS = RE2JS.MULTILINE;

export type UserRegex = RE2JS;
export type CompiledUserRegex = { ok: true; regex: UserRegex } | { ok: false; problem: string };

/** Compiles a user's regex, or says in words a person can act on why it cannot be used. */
export function compileUserRegex(source: string): CompiledUserRegex {
  const size = estimateRegexProgram(source);
  if (size > MAX_REGEX_PROGRAM) return { ok: false, problem: tooLarge(size) };
  try {
    return { ok: true, regex: RE2JS.compile(source, FLAGS) };
  } catch (err) {
    if (err instanceof RE2JSException) return { ok: false, problem: describeRefusal(err, source) };
    throw err;
  }
}

function tooLarge(size: number): string {
  return (
    `RE2: the pattern compiles to about ${size.toLocaleString('en-US')} instructions, more than ${MAX_REGEX_PROGRAM.toLocaleString('en-US')} ` +
    `(a counted repetition such as {1,999} copies what it repeats that many times); use +, * or smaller counts`
  );
}

/** Why RE2 refused a pattern, with what to write instead for what JavaScript has and RE2 has not. */
function describeRefusal(err: RE2JSException, source: string): string {
  if (!(err instanceof RE2JSSyntaxException)) return `RE2: ${err.message}`;
  // re2js writes the flags into the pattern (`(?m)`): a fragment that is not the user's is shown without them.
  const input = err.input ?? '';
  const at = input.startsWith('(?m)') && !source.includes(input) ? input.slice(4) : input;
  const around = 'match the text around the value as part of the pattern, outside the capture group (only the group is read)';
  if (/^\(\?[=!]/.test(at)) return `RE2 syntax: lookahead (?=…) and (?!…) is not supported; ${around}`;
  if (/^\(\?<[=!]/.test(at)) return `RE2 syntax: lookbehind (?<=…) and (?<!…) is not supported; ${around}`;
  // re2js shows only `(?P` of Python's `(?P=name)`: the source says which it was.
  const backreference = /^\\([1-9]|k)/.test(at) || (at === '(?P' && source.includes('(?P='));
  if (backreference) return 'RE2 syntax: backreferences (\\1, \\k<name>) are not supported; write out the text the group matched instead';
  if (at.startsWith('\\u')) return 'RE2 syntax: \\uXXXX is not supported; write \\x{XXXX} (e.g. \\x{00B5} for µ)';
  if (at.startsWith('[^]')) return 'RE2 syntax: [^] is not supported; write (?s:.) for any character';
  return `RE2 syntax: ${err.error}${at ? `: \`${at.length > 80 ? `${at.slice(0, 80)}…` : at}\`` : ''}`;
}

/** The spec-wide refusal: the regexes so far and this one exceed MAX_SPEC_REGEX_PROGRAM together. */
export function specRegexesTooLarge(total: number): string {
  return (
    `RE2: the spec's regexes compile to about ${total.toLocaleString('en-US')} instructions together, ` +
    `more than ${MAX_SPEC_REGEX_PROGRAM.toLocaleString('en-US')}; use +, * or smaller counts, or fewer regexes`
  );
}

/**
 * An estimate of the size of the RE2 program `source` compiles to, from its text alone, in time
 * linear in its length: as RE2's compiler counts, a character, class or assertion is one
 * instruction, an alternative or an optional part one more (a split), a capture group two, and a
 * counted repetition that many copies of what it repeats. Close to re2js's programSize() for any
 * pattern RE2 accepts (a unit test holds it to that); what RE2 refuses it does not judge.
 */
export function estimateRegexProgram(source: string): number {
  /** One group being read: its finished alternatives, the current one, and the last item (what a quantifier repeats). */
  interface Group { done: number; alternatives: number; current: number; last: number; capture: boolean }
  const open = (capture: boolean): Group => ({ done: 0, alternatives: 1, current: 0, last: 0, capture });
  const stack: Group[] = [];
  let group = open(false);
  const item = (cost: number) => {
    group.current += cost;
    group.last = cost;
  };
  const close = (g: Group): number => g.done + g.current + (g.alternatives - 1) + (g.capture ? 2 : 0);
  const n = source.length;
  let i = 0;
  while (i < n) {
    const c = source[i]!;
    if (c === '\\') {
      if (source[i + 1] === 'Q') {
        // \Q…\E: every character up to \E is a literal.
        const end = source.indexOf('\\E', i + 2);
        const stop = end < 0 ? n : end;
        for (let k = i + 2; k < stop; k++) item(1);
        i = end < 0 ? n : end + 2;
        continue;
      }
      i = escapeEnd(source, i);
      item(1);
    } else if (c === '[') {
      i = classEnd(source, i);
      item(1);
    } else if (c === '(') {
      const flagsOnly = /^\(\?[imsU-]*\)/.exec(source.slice(i, i + 12));
      if (flagsOnly) {
        i += flagsOnly[0].length;
        continue;
      }
      const capture = source[i + 1] !== '?' || source[i + 2] === 'P' || (source[i + 2] === '<' && source[i + 3] !== '=' && source[i + 3] !== '!');
      stack.push(group);
      group = open(capture);
      const head = /^\(\?(?:P?<[^>]*>|[imsU-]*:)?/.exec(source.slice(i, i + 40));
      i += head ? head[0].length : 1;
    } else if (c === ')') {
      const cost = close(group);
      group = stack.pop() ?? open(false);
      item(cost);
      i++;
    } else if (c === '|') {
      group.done += group.current;
      group.alternatives++;
      group.current = 0;
      group.last = 0;
      i++;
    } else if (c === '*' || c === '+' || c === '?') {
      group.current += 1;
      i += source[i + 1] === '?' ? 2 : 1;
    } else if (c === '{') {
      const counted = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i, i + 12));
      if (!counted) {
        item(1); // not a repetition: a literal {
        i++;
        continue;
      }
      const min = Math.min(Number(counted[1]), MAX_REPEAT);
      const max = counted[2] === undefined ? min : counted[3] === '' ? min + 1 : Math.min(Number(counted[3]), MAX_REPEAT);
      // max copies of the item (one is already counted), and a split for each optional one.
      group.current += group.last * (Math.max(max, 1) - 1) + Math.max(0, max - min);
      group.last *= Math.max(max, 1);
      i += counted[0].length + (source[i + counted[0].length] === '?' ? 1 : 0);
    } else {
      item(1);
      i++;
    }
  }
  // Groups left open (RE2 refuses them) are closed where the pattern ends.
  let total = close(group);
  while (stack.length > 0) {
    group = stack.pop()!;
    group.current += total;
    total = close(group);
  }
  // Every program ends in a match instruction and starts with a fail one.
  return total + 2;
}

/** Where the escape at `i` (a backslash) ends: \x{…}, \p{…} and \P{…} run to their brace, \pL and \x41 take their letters. */
function escapeEnd(source: string, i: number): number {
  const kind = source[i + 1];
  if ((kind === 'x' || kind === 'p' || kind === 'P') && source[i + 2] === '{') {
    const close = source.indexOf('}', i + 3);
    return close < 0 ? source.length : close + 1;
  }
  if (kind === 'x') return Math.min(source.length, i + 4);
  if (kind === 'p' || kind === 'P') return Math.min(source.length, i + 3);
  return Math.min(source.length, i + 2);
}

/** Where the character class opening at `i` ends: after its `]` (a `]` first in it is a literal). */
function classEnd(source: string, i: number): number {
  let k = i + 1;
  if (source[k] === '^') k++;
  if (source[k] === ']') k++;
  while (k < source.length && source[k] !== ']') {
    if (source[k] === '\\') k = escapeEnd(source, k);
    else if (source[k] === '[' && source[k + 1] === ':') {
      const close = source.indexOf(':]', k + 2);
      k = close < 0 ? k + 1 : close + 2;
    } else k++;
  }
  return Math.min(source.length, k + 1);
}
