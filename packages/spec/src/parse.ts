import { parseDocument } from 'yaml';
import { CampaignSpecFields, Execution, FileName, FileTemplate, ParamAxis } from './campaign';
import { crossFieldIssues, viewOfSpec, type CheckIssue, type SpecView } from './campaign-checks';
import { ROOT_PATH, formatPath, humanErrorMap, issuesFromZodError, type SpecIssue } from './issues';
import { Identifier, ParamValue } from './param-value';
import type { CampaignSpec } from './campaign';
import type { z } from 'zod';

export type ParseCampaignResult = { ok: true; spec: CampaignSpec } | { ok: false; issues: SpecIssue[] };

function toSpecIssue(issue: CheckIssue): SpecIssue {
  return { path: formatPath(issue.path), message: issue.message, code: issue.code };
}

/**
 * Validates a campaign spec (already decoded from YAML or JSON) and reports every problem at
 * once: field errors and, for the parts that validated, the cross-field rules too.
 */
export function parseCampaignSpec(input: unknown): ParseCampaignResult {
  const fields = CampaignSpecFields.safeParse(input, { error: humanErrorMap });
  if (fields.success) {
    const issues = crossFieldIssues(viewOfSpec(fields.data)).map(toSpecIssue);
    return issues.length === 0 ? { ok: true, spec: fields.data } : { ok: false, issues };
  }
  const issues = issuesFromZodError(fields.error);
  const view = salvageView(input);
  if (view) issues.push(...crossFieldIssues(view).map(toSpecIssue));
  return { ok: false, issues };
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
    // YAML 1.2 core schema: `no`, `on` and dates stay strings, duplicate keys are errors.
    const doc = parseDocument(text, { version: '1.2', schema: 'core', uniqueKeys: true, prettyErrors: false });
    const first = doc.errors[0];
    if (first) {
      return syntaxIssue(`not valid YAML at ${lineAndColumn(text, first.pos[0])}: ${first.message.split('\n')[0]}`);
    }
    try {
      raw = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      // Alias bombs ("billion laughs") end here.
      return syntaxIssue(`not valid YAML: ${(err as Error).message}`);
    }
  }
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
