import { z } from 'zod';
import { MARK_NAME } from './marks';
import { quoteForMessage } from './param-value';

/**
 * Phases from the workload's own log (issue 15 §1), the alternative to erg-mark and `import erg`:
 * a campaign's `phases` maps regexes on the lines of its stdout.log to phase marks. When the job
 * ends the scheduler runs them over the log with the metric regexes (apps/scheduler log-marks.ts)
 * and stores each match as a mark of the run (run_marks, writer `log`), on every node of the run:
 * a log line speaks for the whole job.
 *
 *   phases:
 *     - { name: optimizer, begin: '^\[(?<t>[^\]]+)\] step begins', end: '^\[(?<t>[^\]]+)\] step ends' }
 *     - { name: step, step: 'global_step=\d+ at (?<t>[0-9.]+)', timeFormat: unix }
 *
 * Every regex has a named group `t` around the line's timestamp; `timeFormat` says how to read it.
 */

/**
 * How a phase's `t` is read. `iso`: ISO 8601 / `YYYY-MM-DD HH:MM:SS[.fff]` (a comma before the
 * fraction too, as Python's logging writes it), UTC unless it carries `Z` or an offset; `unix`:
 * seconds since the epoch, fractions allowed; `unix_ms`: milliseconds. Absent: each value is
 * read as whichever of these it looks like (a number of 1e11 or more is milliseconds).
 */
export const PHASE_TIME_FORMATS = ['iso', 'unix', 'unix_ms'] as const;
export const PhaseTimeFormat = z.enum(PHASE_TIME_FORMATS);
export type PhaseTimeFormat = z.infer<typeof PhaseTimeFormat>;

/** Most entries of `phases`. */
export const MAX_LOG_PHASES = 32;
/** Longest regex of a phase, as for a metric's. */
export const MAX_PHASE_REGEX_CHARS = 1000;
/** The named group every phase regex puts around the line's timestamp. */
export const PHASE_TIME_GROUP = 't';
/** The fields of a phase that hold regexes, in the order their marks are numbered (begin, end, step). */
export const PHASE_REGEX_FIELDS = ['begin', 'end', 'step'] as const;
export type PhaseRegexField = (typeof PHASE_REGEX_FIELDS)[number];

/** The named groups of a regex source, or the engine's message when it does not compile. */
export function regexGroupNames(source: string): string[] | string {
  try {
    // An empty alternative makes every regex match "", which lists its named groups.
    const match = new RegExp(`${source}|`).exec('');
    return Object.keys(match?.groups ?? {});
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * A repetition applied directly to a group that holds nothing but one repeated atom — `(a+)+`,
 * `(?:\w*)*`, `(.+){2,}` — matches exactly what the inner repetition alone matches, yet on a line
 * that almost matches the engine tries every way of splitting it between the two: exponential
 * time. Such a nesting is always a mistake and always has a linear rewrite, so it is refused.
 * (Other costly patterns are stopped at run time by the regex time budget.)
 */
const NESTED_REPETITION = /\((?:\?:|\?<[A-Za-z_$][\w$]*>)?([^()|])[+*]\??\)(?:[+*]|\{\d+,\d*\})/d;
/** One atom of a regex source: an escape, a character class, or one character. */
const ATOM = /\\[^]|\[(?:\\[^]|[^\]\\])*\]|[^]/g;

/** The first nesting NESTED_REPETITION describes, as written in `source`, with its inner atom; null when there is none. */
function nestedRepetition(source: string): { text: string; atom: string } | null {
  // Each escape and class stands as one letter, so that a parenthesis inside one is not a group.
  const atoms = source.match(ATOM) ?? [];
  const m = NESTED_REPETITION.exec(atoms.map((atom) => (atom.length > 1 ? 'a' : atom)).join(''));
  if (!m) return null;
  const [from, to] = m.indices![0]!;
  return { text: atoms.slice(from, to).join(''), atom: atoms[m.indices![1]![0]]! };
}

/** Why a phase regex is refused, or null when it is usable. */
function regexProblem(source: string): string | null {
  const groups = regexGroupNames(source);
  if (typeof groups === 'string') return `not a valid regular expression: ${groups}`;
  if (!groups.includes(PHASE_TIME_GROUP)) {
    return `needs a named group (?<t>…) around the line's timestamp, e.g. '^\\[(?<t>[^\\]]+)\\] step begins'`;
  }
  const nested = nestedRepetition(source);
  if (nested) {
    return (
      `${quoteForMessage(nested.text)} repeats a repetition, which can take exponential time on a line that almost matches; ` +
      `repeat the inner part once instead (e.g. ${quoteForMessage(`${nested.atom}+`)})`
    );
  }
  return null;
}

const PhaseRegex = z.string().min(1).max(MAX_PHASE_REGEX_CHARS);

/** One entry of `phases`: a phase with a duration (`begin` and `end`) or a step counter's instants (`step`). */
export const LogPhase = z
  .strictObject({
    name: z.string().regex(MARK_NAME, {
      error: (iss) => `${quoteForMessage(String(iss.input))} is not a phase name: use 1-64 letters, digits and _ . : / -`,
    }),
    /** A line that opens the phase. */
    begin: PhaseRegex.optional(),
    /** A line that closes it (the innermost open phase of that name). */
    end: PhaseRegex.optional(),
    /** A line that marks one step done: the phase is then a step counter, and has no begin or end. */
    step: PhaseRegex.optional(),
    timeFormat: PhaseTimeFormat.optional(),
  })
  .superRefine((phase, ctx) => {
    const issue = (path: PropertyKey[], message: string, code: string) => ctx.addIssue({ code: 'custom', path, message, params: { code } });
    const hasRange = phase.begin !== undefined || phase.end !== undefined;
    if (phase.step !== undefined && hasRange) {
      issue(['step'], 'a phase has either begin and end (a span) or step (instants), not both; make the step counter an entry of its own', 'invalid_phase');
    } else if (!hasRange && phase.step === undefined) {
      issue([], 'needs begin and end regexes (the lines that open and close the phase) or a step regex (the line that ends each step)', 'invalid_phase');
    } else if (phase.begin === undefined && phase.end !== undefined) {
      issue(['begin'], 'required with end: the regex of the line that opens the phase', 'required');
    } else if (phase.end === undefined && phase.begin !== undefined) {
      issue(['end'], 'required with begin: the regex of the line that closes the phase', 'required');
    }
    for (const field of PHASE_REGEX_FIELDS) {
      const source = phase[field];
      // An empty or too long one has its issue from PhaseRegex already (and is not compiled).
      if (source === undefined || source.length === 0 || source.length > MAX_PHASE_REGEX_CHARS) continue;
      const problem = regexProblem(source);
      if (problem) issue([field], problem, 'invalid_regex');
    }
  });
export type LogPhase = z.infer<typeof LogPhase>;

/** The `phases` section: at most MAX_LOG_PHASES entries, names unique. */
export const LogPhases = z
  .array(LogPhase)
  .max(MAX_LOG_PHASES)
  .superRefine((phases, ctx) => {
    const first = new Map<string, number>();
    phases.forEach((phase, i) => {
      const seen = first.get(phase.name);
      if (seen === undefined) first.set(phase.name, i);
      else {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'name'],
          message: `phase "${phase.name}" is already defined at phases[${seen}]; give each entry its own name`,
          params: { code: 'duplicate_phase' },
        });
      }
    });
  });
export type LogPhases = z.infer<typeof LogPhases>;
