import type { CheckIssue } from './campaign-checks';
import { MAX_LOG_PHASES, PHASE_REGEX_FIELDS, phaseRegexProblem } from './log-phases';
import { MAX_METRICS, MetricReduce, metricRegexProblem } from './metrics';
import { compileUserRegex, estimateRegexProgram, MAX_REGEX_CHARS, MAX_REGEX_PROGRAM, MAX_SPEC_REGEX_PROGRAM, specRegexesTooLarge, type UserRegex } from './user-regex';

/**
 * The regexes of a spec coming in (metrics[i].regex, phases[i].begin/end/step): each must be RE2
 * syntax, small enough (user-regex.ts), and have the group its use reads. Read from the document
 * as written, so that they are judged even when other fields are wrong; entries past the schema's
 * limits (MAX_METRICS, MAX_LOG_PHASES), too long or not strings have their issue from the schema.
 *
 * Only at intake (parseCampaignSpec), not in the schema: a stored spec is parsed again on every
 * read (@erg/db readStoredSpec), and one created before erg ran regexes with RE2 keeps its regex;
 * the scheduler then reports that one metric or phase without a value, and nothing else changes.
 */
export function regexIssues(input: unknown): CheckIssue[] {
  if (!isRecord(input)) return [];
  const issues: CheckIssue[] = [];
  let total = 0;
  const check = (path: PropertyKey[], source: unknown, problemOf: (regex: UserRegex) => string | null) => {
    if (typeof source !== 'string' || source.length === 0 || source.length > MAX_REGEX_CHARS) return;
    // Past the spec's budget nothing more is compiled: that is what the budget bounds.
    if (total > MAX_SPEC_REGEX_PROGRAM) return;
    // One too large on its own is refused as such by compileUserRegex, before it compiles.
    const size = estimateRegexProgram(source);
    if (size <= MAX_REGEX_PROGRAM) total += size;
    if (total > MAX_SPEC_REGEX_PROGRAM) {
      issues.push({ path, code: 'invalid_regex', message: specRegexesTooLarge(total) });
      return;
    }
    const compiled = compileUserRegex(source);
    const problem = compiled.ok ? problemOf(compiled.regex) : compiled.problem;
    if (problem) issues.push({ path, code: 'invalid_regex', message: problem });
  };
  const metrics = Array.isArray(input['metrics']) ? input['metrics'].slice(0, MAX_METRICS) : [];
  metrics.forEach((metric: unknown, i) => {
    if (!isRecord(metric)) return;
    // An unknown reduce has its own issue; the capture group is then not judged.
    const reduce = MetricReduce.safeParse(metric['reduce'] ?? 'last');
    check(['metrics', i, 'regex'], metric['regex'], (regex) => (reduce.success ? metricRegexProblem(regex, reduce.data) : null));
  });
  const phases = Array.isArray(input['phases']) ? input['phases'].slice(0, MAX_LOG_PHASES) : [];
  phases.forEach((phase: unknown, i) => {
    if (!isRecord(phase)) return;
    for (const field of PHASE_REGEX_FIELDS) check(['phases', i, field], phase[field], phaseRegexProblem);
  });
  return issues;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
