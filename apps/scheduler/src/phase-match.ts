/**
 * Phase regexes over a batch of log lines, in a regex worker (regex-worker.ts): each match is one
 * mark — the line's byte offset in the log, the regex's slot (which phase, which kind), the time
 * its `(?<t>…)` group says. Pure and without package imports, since a worker thread loads it.
 * The campaign-side rules (slots, offsets, warnings) are log-phases.ts's.
 *
 * One mark per regex per line: each line is matched on its own (log-lines.ts), and its first
 * match is its mark (a line is one event of the log, and its byte offset is the mark's identity).
 */
import type { PhaseTimeFormat } from '@erg/spec';
import type { CompiledUserRegex } from '@erg/spec/user-regex';
import { forEachLine } from './log-lines';

/** One phase regex as a worker runs it. */
export interface PhasePattern {
  source: string;
  /** Which phase and kind its marks are: phase index × 3 + 0 (begin), 1 (end) or 2 (step). */
  slot: number;
  /** How its `t` is read; null: each value as whichever format it looks like. */
  format: PhaseTimeFormat | null;
}

/** What a `fold-matches` task is given to find phase marks in its batch. */
export interface PhaseMatchInput {
  patterns: PhasePattern[];
  /** Byte offset in the log of the batch's first byte. */
  offset: number;
  /** Most marks to take from this batch: what is left of the run's limit. */
  maxMarks: number;
}

/** The marks found in one batch, as columns (plain arrays cross the thread boundary cheaply). */
export interface PhaseMarkBatch {
  /** Per mark: the byte offset in the log of the line it was found on. */
  lines: number[];
  /** Per mark: its pattern's slot. */
  slots: number[];
  /** Per mark: its time, Unix ms. */
  t: number[];
  /** Per pattern (by position in the input): matches whose `t` did not read as a time. */
  unparsed: number[];
  /** Per pattern: the first such `t`, cut to 80 characters; null when there was none. */
  unparsedExample: (string | null)[];
  /** maxMarks was reached: matches after it were not kept. */
  full: boolean;
  /** Per pattern: why RE2 refuses it (a spec stored before erg ran regexes with RE2), or null. */
  refused: (string | null)[];
}

/** A number of 1e11 or more read in auto mode is milliseconds (1e11 s is the year 5138, 1e11 ms 1973). */
export const AUTO_MS_FROM = 1e11;

const UNIX = /^\+?\d{1,17}(?:\.\d{1,9})?$/;
// YYYY-MM-DD, T or space, HH:MM:SS, optional fraction (. or , as Python's logging writes it), optional Z or offset.
const ISO = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(?: ?([Zz]|[+-]\d{2}(?::?\d{2})?))?$/;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** An ISO 8601 / `YYYY-MM-DD HH:MM:SS[.fff]` time as Unix ms (UTC unless it has an offset); null when it is not one. */
export function parseIsoTime(value: string): number | null {
  const m = ISO.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > DAYS_IN_MONTH[month - 1]! || hour > 23 || minute > 59 || second > 60) return null;
  if (month === 2 && day === 29 && !(year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0))) return null;
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone && zone !== 'Z' && zone !== 'z') {
    const hours = Number(zone.slice(1, 3));
    const minutes = zone.length > 3 ? Number(zone.slice(-2)) : 0;
    if (hours > 23 || minutes > 59) return null;
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
  }
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day); // Date.UTC would read years below 100 as 19xx
  utc.setUTCHours(hour, minute, second, 0);
  const fraction = m[7] ? Number(`0.${m[7]}`) * 1000 : 0;
  return utc.getTime() + fraction - offsetMinutes * 60_000;
}

/** A log's timestamp as Unix ms, read as `format` says (null: whichever format it looks like); null when it is not a time. */
export function parseLogTime(raw: string, format: PhaseTimeFormat | null): number | null {
  const value = raw.trim();
  if (format === 'iso') return parseIsoTime(value);
  if (!UNIX.test(value)) return format === null ? parseIsoTime(value) : null;
  const n = Number(value);
  if (format === 'unix_ms') return n;
  if (format === 'unix') return n * 1000;
  return n >= AUTO_MS_FROM ? n : n * 1000;
}

/**
 * Every phase mark in `text` (the UTF-8 decoding of `bytes`, whole lines of the log from byte
 * `input.offset`). `regexOf` compiles a source (user-regex.ts: one RE2 refuses gives no marks,
 * and its reason); `onPattern` is told which pattern runs (the worker's progress slot).
 */
export function matchPhases(
  text: string,
  bytes: Uint8Array,
  input: PhaseMatchInput,
  regexOf: (source: string) => CompiledUserRegex,
  onPattern: (index: number) => void = () => undefined,
): PhaseMarkBatch {
  const out: PhaseMarkBatch = {
    lines: [], slots: [], t: [], unparsed: input.patterns.map(() => 0), unparsedExample: input.patterns.map(() => null), full: false,
    refused: input.patterns.map(() => null),
  };
  const lineStarts: number[] = [];
  for (const [k, pattern] of input.patterns.entries()) {
    if (out.full) break;
    onPattern(k);
    const compiled = regexOf(pattern.source);
    if (!compiled.ok) {
      out.refused[k] = compiled.problem;
      continue;
    }
    const re = compiled.regex;
    // A regex without its group t (one stored before the spec asked for it) finds no time: its lines count as unparsed.
    const timed = TIME_GROUP in re.namedGroups();
    forEachLine(text, (start, end) => {
      const line = text.slice(start, end);
      if (!re.test(line)) return false;
      const m = re.matcher(line);
      if (!m.find()) return false;
      const raw = timed ? m.group(TIME_GROUP) : null;
      const t = raw === null ? null : parseLogTime(raw, pattern.format);
      if (t === null || !Number.isFinite(t)) {
        if (out.unparsed[k]!++ === 0) out.unparsedExample[k] = (raw ?? '').slice(0, 80);
        return false;
      }
      if (out.t.length >= input.maxMarks) {
        out.full = true;
        return true;
      }
      lineStarts.push(start);
      out.slots.push(pattern.slot);
      out.t.push(t);
      return false;
    });
  }
  out.lines = byteOffsetsOfLines(text, bytes, lineStarts, input.offset);
  return out;
}

/** The named group a phase regex puts around the line's timestamp (@erg/spec's PHASE_TIME_GROUP). */
const TIME_GROUP = 't';

/**
 * The byte offsets (from `base`) of lines given by the index of their first character in `text`.
 * Counted by line ends, which decoding never adds or removes (a newline is one byte in UTF-8, and
 * never part of a malformed sequence): exact whatever the text holds.
 */
function byteOffsetsOfLines(text: string, bytes: Uint8Array, starts: readonly number[], base: number): number[] {
  const order = starts.map((_, i) => i).sort((a, b) => starts[a]! - starts[b]!);
  const out = new Array<number>(starts.length);
  let char = 0;
  let byte = 0;
  for (const i of order) {
    const target = starts[i]!;
    while (char < target) {
      const newline = text.indexOf('\n', char);
      if (newline < 0 || newline >= target) break; // cannot happen: target starts a line
      char = newline + 1;
      byte = bytes.indexOf(10, byte) + 1;
    }
    out[i] = base + byte;
  }
  return out;
}
