import { z } from 'zod';
import { MARK_NAME } from './marks';
import { quoteForMessage } from './param-value';
import { MAX_REGEX_CHARS, type UserRegex } from './user-regex';

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
 * Every regex (RE2 syntax: user-regex.ts) has a named group `t` around the line's timestamp;
 * `timeFormat` says how to read it.
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
export const MAX_PHASE_REGEX_CHARS = MAX_REGEX_CHARS;
/** The named group every phase regex puts around the line's timestamp. */
export const PHASE_TIME_GROUP = 't';
/** The fields of a phase that hold regexes, in the order their marks are numbered (begin, end, step). */
export const PHASE_REGEX_FIELDS = ['begin', 'end', 'step'] as const;
export type PhaseRegexField = (typeof PHASE_REGEX_FIELDS)[number];

/**
 * Why a phase's compiled regex cannot give marks, or null: it must name the line's timestamp
 * `(?<t>…)`. Checked when a spec comes in (regex-checks.ts), with RE2's own refusals (user-regex.ts).
 */
export function phaseRegexProblem(regex: UserRegex): string | null {
  if (!(PHASE_TIME_GROUP in regex.namedGroups())) {
    return `needs a named group (?<t>…) around the line's timestamp, e.g. '^\\[(?<t>[^\\]]+)\\] step begins'`;
  }
  return null;
}

/** A phase's regex: RE2 syntax (user-regex.ts), checked when a spec comes in, so a stored spec keeps the regex it was created with. */
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
