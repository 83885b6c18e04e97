import { Composer, Parser, YAMLParseError, type Document } from 'yaml';
import { CampaignSpecFields, Execution, FileName, FileTemplate, ParamAxis } from './campaign';
import { powerTemplates } from './power';
import { Design } from './design';
import { Resources } from './resources';
import { crossFieldIssues, MAX_REPORTED_ISSUES, templatedOptions, viewOfSpec, type CheckIssue, type SpecView } from './campaign-checks';
import { documentIssue, yamlNestingIssue } from './document';
import { regexIssues } from './regex-checks';
import { ROOT_PATH, formatPath, humanErrorMap, issuesFromZodError, type SpecIssue } from './issues';
import { Identifier, ParamValue } from './param-value';
import type { CampaignSpec } from './campaign';
import type { z } from 'zod';

export type ParseCampaignResult = { ok: true; spec: CampaignSpec } | { ok: false; issues: SpecIssue[] };

export { MAX_REPORTED_ISSUES };

function capped(issues: SpecIssue[]): SpecIssue[] {
  if (issues.length <= MAX_REPORTED_ISSUES) return issues;
  return [
    ...issues.slice(0, MAX_REPORTED_ISSUES),
    { path: ROOT_PATH, code: 'too_many_issues', message: `only the first ${MAX_REPORTED_ISSUES} issues are shown; fix these first` },
  ];
}

function toSpecIssue(issue: CheckIssue): SpecIssue {
  return { path: formatPath(issue.path), message: issue.message, code: issue.code };
}

/**
 * Validates a campaign spec (already decoded from YAML or JSON) and reports every problem at
 * once: field errors and, for the parts that validated, the cross-field rules too; and the rules
 * of its regexes, which only a spec coming in must meet (regex-checks.ts).
 */
export function parseCampaignSpec(input: unknown): ParseCampaignResult {
  // Before any schema: a value too large or too deep is refused in time linear in the limits.
  const oversized = documentIssue(input);
  if (oversized) return { ok: false, issues: [oversized] };
  const fields = CampaignSpecFields.safeParse(input, { error: humanErrorMap });
  if (fields.success) {
    const issues = [...crossFieldIssues(viewOfSpec(fields.data)), ...regexIssues(input)].map(toSpecIssue);
    return issues.length === 0 ? { ok: true, spec: fields.data } : { ok: false, issues: capped(issues) };
  }
  const issues = issuesFromZodError(fields.error);
  const view = salvageView(input);
  if (view) issues.push(...crossFieldIssues(view).map(toSpecIssue));
  issues.push(...regexIssues(input).map(toSpecIssue));
  return { ok: false, issues: capped(issues) };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function valid<S extends z.ZodType>(schema: S, value: unknown): z.output<S> | undefined {
  const result = schema.safeParse(value);
  return result.success ? result.data : undefined;
}

/** Each entry of a record whose key is valid, with its value or undefined when the value is not. */
function salvageRecord<S extends z.ZodType>(
  raw: unknown,
  key: z.ZodType<string>,
  value: S,
): Record<string, z.output<S> | undefined> | undefined {
  if (raw === undefined) return {};
  if (!isPlainObject(raw)) return undefined;
  const out: Record<string, z.output<S> | undefined> = {};
  for (const [k, v] of Object.entries(raw)) if (key.safeParse(k).success) out[k] = valid(value, v);
  return out;
}

function salvageArray<T>(raw: unknown, item: (value: unknown) => T | undefined): Array<T | undefined> | undefined {
  if (raw === undefined) return [];
  return Array.isArray(raw) ? raw.map(item) : undefined;
}

const DESIGN_NODES = Design.unwrap().shape.nodes;
const NODES_PER_RUN = Resources.unwrap().shape.nodes;

/** The parts of an invalid spec that the cross-field rules can still be trusted to judge. */
function salvageView(input: unknown): SpecView | undefined {
  if (!isPlainObject(input)) return undefined;
  const values = ParamValue.or(ParamAxis);
  return {
    execution: input['execution'] === undefined ? 'slurm' : valid(Execution, input['execution']),
    given: { cluster: input['cluster'] !== undefined, run: input['run'] !== undefined },
    parameters: salvageRecord(input['parameters'], Identifier, ParamAxis),
    zip: salvageArray(input['zip'], (group) => (isPlainObject(group) ? salvageRecord(group, Identifier, ParamAxis) : undefined)),
    exclude: salvageArray(input['exclude'], (entry) => (isPlainObject(entry) ? salvageRecord(entry, Identifier, values) : undefined)),
    run: valid(CampaignSpecFields.shape.run, input['run']),
    files: salvageRecord(input['files'], FileName, FileTemplate),
    slurmTemplates: templatedOptions(input['slurm']),
    powerTemplates: powerTemplates(input['power']),
    repetitions: valid(CampaignSpecFields.shape.repetitions, input['repetitions']),
    strategy: valid(CampaignSpecFields.shape.strategy, input['strategy']),
    designNodes: isPlainObject(input['design']) ? valid(DESIGN_NODES, input['design']['nodes']) : undefined,
    nodesPerRun: input['resources'] === undefined ? 1 : isPlainObject(input['resources']) ? valid(NODES_PER_RUN, input['resources']['nodes']) : undefined,
  };
}

export type SpecFormat = 'yaml' | 'json';

export type DecodeResult = { ok: true; raw: unknown } | { ok: false; issues: SpecIssue[] };
export type ParseCampaignTextResult = { ok: true; spec: CampaignSpec; raw: unknown } | { ok: false; issues: SpecIssue[] };

function syntaxIssue(message: string): { ok: false; issues: SpecIssue[] } {
  return { ok: false, issues: [{ path: ROOT_PATH, code: 'syntax_error', message }] };
}

/** Parsers report a character offset; people look for a line and column. */
function jsonErrorMessage(text: string, err: Error): string {
  const position = /position (\d+)/.exec(err.message)?.[1];
  const detail = err.message.replace(/\s*(in JSON )?at position \d+.*$/s, '');
  if (position === undefined) return `not valid JSON: ${detail}`;
  return `not valid JSON at ${lineAndColumn(text, Number(position))}: ${detail}`;
}

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  return `line ${before.split('\n').length}, column ${offset - before.lastIndexOf('\n')}`;
}

/**
 * YAML 1.2 core schema (`no`, `on` and dates stay strings, duplicate keys are errors), in the
 * library's two stages so that the nesting is measured between them: the parser builds the
 * syntax tree without recursing, the composer recurses over it.
 */
function parseYaml(text: string): DecodeResult {
  const tokens = Array.from(new Parser().parse(text));
  const deep = yamlNestingIssue(tokens);
  if (deep) return { ok: false, issues: [deep] };
  let doc: Document.Parsed | undefined;
  for (const next of new Composer({ version: '1.2', schema: 'core', uniqueKeys: true, prettyErrors: false }).compose(tokens, true, text.length)) {
    if (!doc) doc = next;
    else {
      doc.errors.push(new YAMLParseError([next.range[0], next.range[1]], 'MULTIPLE_DOCS', 'Source contains multiple documents; please use YAML.parseAllDocuments()'));
      break;
    }
  }
  if (!doc) return syntaxIssue('the campaign spec is empty');
  const first = doc.errors[0];
  if (first) {
    return syntaxIssue(`not valid YAML at ${lineAndColumn(text, first.pos[0])}: ${first.message.split('\n')[0]}`);
  }
  try {
    // maxAliasCount stops alias chains early ("billion laughs"); documentIssue then bounds what
    // the aliases that remain expand to.
    return { ok: true, raw: doc.toJS({ maxAliasCount: 100 }) };
  } catch (err) {
    return syntaxIssue(`not valid YAML: ${(err as Error).message}`);
  }
}

/**
 * Decodes a spec written as YAML or JSON without validating it, so that a caller can validate it
 * together with other rules (validateCampaign in @erg/sweep). Syntax errors say where they are.
 */
export function decodeCampaignText(text: string, format: SpecFormat): DecodeResult {
  let raw: unknown;
  if (format === 'json') {
    try {
      raw = JSON.parse(text);
    } catch (err) {
      return syntaxIssue(jsonErrorMessage(text, err as Error));
    }
  } else {
    const parsed = parseYaml(text);
    if (!parsed.ok) return parsed;
    raw = parsed.raw;
  }
  // JSON text is refused here too: the same limits whatever the format.
  const oversized = documentIssue(raw);
  if (oversized) return { ok: false, issues: [oversized] };
  if (raw === null || raw === undefined) return syntaxIssue('the campaign spec is empty');
  return { ok: true, raw };
}

/** Decodes and validates a spec written as YAML or JSON; `raw` is the document as written, before defaults. */
export function parseCampaignText(text: string, format: SpecFormat): ParseCampaignTextResult {
  const decoded = decodeCampaignText(text, format);
  if (!decoded.ok) return decoded;
  const parsed = parseCampaignSpec(decoded.raw);
  return parsed.ok ? { ...parsed, raw: decoded.raw } : parsed;
}
