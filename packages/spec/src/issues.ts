import { z } from 'zod';
import { quoteForMessage, typeName } from './param-value';
import { closestMatch } from './suggest';

/**
 * The one error shape the API returns and the CLI prints. `path` is written the way a person
 * reads the spec: `resources.time`, `zip[0].mb`, `files["ds_config.json"]`, `(root)`. `code` is
 * zod's issue code for shape errors (`invalid_type`, `too_big`, …), `required` for a missing
 * field, or one of erg's own codes (ISSUE_CODES) for rules that span fields.
 */
export const SpecIssue = z.object({
  path: z.string(),
  message: z.string(),
  code: z.string(),
});
export type SpecIssue = z.infer<typeof SpecIssue>;

/** erg's own issue codes, beyond zod's. */
export const ISSUE_CODES = [
  'required',
  'syntax_error',
  'invalid_slurm_time',
  'invalid_slurm_option',
  'invalid_power_value',
  'invalid_node_count',
  'power_unsupported',
  'invalid_regex',
  'duplicate_metric',
  'invalid_phase',
  'duplicate_phase',
  'reserved_name',
  'parameter_redefined',
  'zip_length_mismatch',
  'duplicate_value',
  'unknown_parameter',
  'exclude_never_matches',
  'template_syntax',
  'unknown_placeholder',
  'campaign_too_large',
  'nothing_to_run',
  'exclude_too_complex',
  'document_too_large',
  'too_many_issues',
  'strategy_conflict',
  'budget_too_small',
  'duplicate_node',
  'design_conflict',
] as const;
export type IssueCode = (typeof ISSUE_CODES)[number];

export const ROOT_PATH = '(root)';
const REQUIRED = 'required';

/** `['files', 'ds_config.json']` → `files["ds_config.json"]`; `[]` → `(root)`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else {
      const key = String(part);
      // A hostile key may be a megabyte long: paths show at most 80 characters of it.
      out += /^[A-Za-z_][A-Za-z0-9_]{0,79}$/.test(key) ? `${out ? '.' : ''}${key}` : `[${quoteForMessage(key)}]`;
    }
  }
  return out || ROOT_PATH;
}

/** `resources.time: "90min" is not a Slurm time; …` — one line per issue for a terminal. */
export function formatIssue(issue: SpecIssue): string {
  return `${issue.path}: ${issue.message}`;
}

function withArticle(noun: string): string {
  return `${/^[aeiou]/.test(noun) ? 'an' : 'a'} ${noun}`;
}

const EXPECTED_NAMES: Record<string, string> = { int: 'integer', record: 'object', nan: 'NaN' };

function expectedName(expected: string): string {
  return EXPECTED_NAMES[expected] ?? expected;
}

function describeInput(input: unknown): string {
  if (typeof input === 'number' && !Number.isFinite(input)) return String(input);
  return typeName(input);
}

function countOf(n: number | bigint, unit: string): string {
  return `${n} ${unit}${n === 1 || n === 1n ? '' : 's'}`;
}

function sizeSuffix(input: unknown): string {
  if (typeof input === 'string') return ` (got ${countOf(input.length, 'character')})`;
  if (Array.isArray(input)) return ` (got ${countOf(input.length, 'value')})`;
  if (typeof input === 'number') return `, got ${input}`;
  return '';
}

/**
 * zod's messages, rewritten for people who write campaign specs. Schema-level `error` options
 * still win; this only fills in what they leave out.
 */
export const humanErrorMap: z.core.$ZodErrorMap = (iss) => {
  switch (iss.code) {
    case 'invalid_type': {
      if (iss.input === undefined) return REQUIRED;
      if (iss.expected === 'int' && typeof iss.input === 'number' && Number.isFinite(iss.input)) {
        return `expected an integer, got ${iss.input}`;
      }
      return `expected ${withArticle(expectedName(iss.expected))}, got ${describeInput(iss.input)}`;
    }
    case 'too_small': {
      const min = iss.minimum;
      if (iss.origin === 'string') {
        return min === 1 || min === 1n ? 'must not be empty' : `must be at least ${countOf(min, 'character')} long${sizeSuffix(iss.input)}`;
      }
      if (iss.origin === 'array' || iss.origin === 'set') {
        return min === 1 || min === 1n ? 'must have at least one value' : `must have at least ${countOf(min, 'value')}${sizeSuffix(iss.input)}`;
      }
      return `must be ${iss.inclusive ? 'at least' : 'greater than'} ${min}${sizeSuffix(iss.input)}`;
    }
    case 'too_big': {
      const max = iss.maximum;
      if (iss.origin === 'string') return `must be at most ${countOf(max, 'character')} long${sizeSuffix(iss.input)}`;
      if (iss.origin === 'array' || iss.origin === 'set') return `must have at most ${countOf(max, 'value')}${sizeSuffix(iss.input)}`;
      return `must be ${iss.inclusive ? 'at most' : 'less than'} ${max}${sizeSuffix(iss.input)}`;
    }
    case 'invalid_value': {
      const allowed = iss.values.map((v) => JSON.stringify(v)).join(', ');
      const got = typeof iss.input === 'string' ? quoteForMessage(iss.input) : describeInput(iss.input);
      const hint = typeof iss.input === 'string' ? closestMatch(iss.input, iss.values.map(String)) : undefined;
      return `must be one of ${allowed}; got ${got}${hint ? ` (did you mean "${hint}"?)` : ''}`;
    }
    case 'invalid_format':
      return `${typeof iss.input === 'string' ? quoteForMessage(iss.input) : 'value'} does not match the pattern ${iss.pattern ?? iss.format}`;
    case 'not_multiple_of':
      return `must be a multiple of ${iss.divisor}`;
    case 'unrecognized_keys': {
      const shape = (iss.inst as { _zod?: { def?: { shape?: object } } } | undefined)?._zod?.def?.shape;
      const allowed = shape ? Object.keys(shape) : [];
      const shown = iss.keys.slice(0, 10).map((k) => quoteForMessage(k)).join(', ');
      const names = iss.keys.length > 10 ? `${shown}, … ${iss.keys.length - 10} more` : shown;
      const hint = iss.keys.length === 1 && iss.keys[0] !== undefined ? closestMatch(iss.keys[0], allowed) : undefined;
      return `unknown field${iss.keys.length === 1 ? '' : 's'} ${names}${hint ? ` (did you mean "${hint}"?)` : ''}${
        allowed.length ? `; allowed: ${allowed.join(', ')}` : ''
      }`;
    }
    case 'invalid_key':
      return iss.issues[0]?.message ?? `invalid key`;
    case 'invalid_union': {
      const expected = new Set<string>();
      for (const option of iss.errors) {
        for (const e of option) if (e.code === 'invalid_type' && e.path.length === 0) expected.add(expectedName(e.expected));
      }
      return expected.size > 0
        ? `expected ${[...expected].map(withArticle).join(' or ')}, got ${describeInput(iss.input)}`
        : 'does not match any of the allowed forms';
    }
    default:
      return undefined;
  }
};

/** erg's code for a custom issue, else zod's; a bad record key takes the code of what was wrong with it. */
function issueCode(iss: z.core.$ZodIssue): string {
  if (iss.code === 'invalid_key' && iss.issues[0]) return issueCode(iss.issues[0]);
  if (iss.code === 'custom' && typeof iss.params?.['code'] === 'string') return iss.params['code'];
  if (iss.code === 'invalid_type' && iss.message === REQUIRED) return REQUIRED;
  return iss.code;
}

/** Turns a ZodError into SpecIssues. Parse with `humanErrorMap` (parseWithIssues does) for readable messages. */
export function issuesFromZodError(err: z.ZodError): SpecIssue[] {
  return err.issues.map((iss) => {
    // A strict object reports all unknown keys at its own path; with one key, point at the key.
    const path = iss.code === 'unrecognized_keys' && iss.keys.length === 1 ? [...iss.path, ...iss.keys] : iss.path;
    return { path: formatPath(path), message: iss.message, code: issueCode(iss) };
  });
}

export type ParseResult<T> = { ok: true; data: T } | { ok: false; issues: SpecIssue[] };

/** Validates `input` against any schema of this package and reports problems as SpecIssues. */
export function parseWithIssues<S extends z.ZodType>(schema: S, input: unknown): ParseResult<z.output<S>> {
  const result = schema.safeParse(input, { error: humanErrorMap });
  return result.success ? { ok: true, data: result.data } : { ok: false, issues: issuesFromZodError(result.error) };
}
