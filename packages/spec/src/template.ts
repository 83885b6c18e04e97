import { canonicalValue, isSafeValue, quoteForMessage } from './param-value';
import { ErgError } from './errors';

/**
 * Templates are `run` and every `files` entry: text with `{{ name }}` placeholders. There is no
 * escape and no logic on purpose — a template only ever substitutes validated values.
 *
 * In a run of braces the last two open the placeholder, so `{{{x}}}` is `{`, `{{x}}`, `}`.
 */

/** Names every template may use besides the campaign's parameters; erg fills them in per run. */
export const TEMPLATE_BUILTINS = ['run_id', 'campaign_id', 'repetition'] as const;
export type TemplateBuiltin = (typeof TEMPLATE_BUILTINS)[number];

export interface TemplatePosition {
  /** Offset of the opening `{{` in the text. */
  index: number;
  /** 1-based. */
  line: number;
  /** 1-based, in UTF-16 code units. */
  column: number;
}
export interface TemplatePlaceholder extends TemplatePosition {
  name: string;
}
export interface TemplateProblem extends TemplatePosition {
  message: string;
}
export interface ScannedTemplate {
  /** Literal text and placeholders, in order; literal parts are never empty. */
  segments: Array<string | TemplatePlaceholder>;
  problems: TemplateProblem[];
}

export class TemplateError extends ErgError<'template_error'> {
  constructor(message: string) {
    super('template_error', message);
  }
}

const PLACEHOLDER_BODY = /^[ \t]*([A-Za-z_][A-Za-z0-9_]{0,63})[ \t]*$/;

function positionOf(text: string, index: number): TemplatePosition {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) {
    line += 1;
    lineStart = i + 1;
  }
  return { index, line, column: index - lineStart + 1 };
}

/** Splits a template into literal text and placeholders, collecting every syntax problem. */
export function scanTemplate(text: string): ScannedTemplate {
  const segments: ScannedTemplate['segments'] = [];
  const problems: TemplateProblem[] = [];
  let literalStart = 0;
  let from = 0;
  for (;;) {
    let open = text.indexOf('{{', from);
    if (open === -1) break;
    while (text[open + 2] === '{') open += 1;
    const close = text.indexOf('}}', open + 2);
    if (close === -1) {
      const at = positionOf(text, open);
      problems.push({
        ...at,
        message: `unclosed "{{" at line ${at.line}, column ${at.column}; write placeholders as {{name}}`,
      });
      break;
    }
    const body = PLACEHOLDER_BODY.exec(text.slice(open + 2, close));
    if (body?.[1] === undefined) {
      const at = positionOf(text, open);
      problems.push({
        ...at,
        message: `${quoteForMessage(text.slice(open, close + 2), 40)} at line ${at.line}, column ${at.column} is not a placeholder; write {{name}} with a parameter name`,
      });
    } else {
      if (open > literalStart) segments.push(text.slice(literalStart, open));
      segments.push({ name: body[1], ...positionOf(text, open) });
      literalStart = close + 2;
    }
    from = close + 2;
  }
  if (literalStart < text.length) segments.push(text.slice(literalStart));
  return { segments, problems };
}

/** Names used by a template, each once, in order of first use. Throws TemplateError on bad syntax. */
export function templatePlaceholders(text: string): string[] {
  const { segments, problems } = scanTemplate(text);
  if (problems[0]) throw new TemplateError(problems[0].message);
  const names: string[] = [];
  for (const s of segments) if (typeof s !== 'string' && !names.includes(s.name)) names.push(s.name);
  return names;
}

/**
 * Substitutes the canonical string of each value. Throws TemplateError on bad syntax, on a
 * placeholder without a value and — as a second line of defence behind spec validation — on a
 * value outside SAFE_VALUE, because rendered templates become shell scripts.
 */
export function renderTemplate(text: string, values: Readonly<Record<string, string | number | boolean>>): string {
  const { segments, problems } = scanTemplate(text);
  if (problems[0]) throw new TemplateError(problems[0].message);
  let out = '';
  for (const s of segments) {
    if (typeof s === 'string') {
      out += s;
      continue;
    }
    const value = Object.hasOwn(values, s.name) ? values[s.name] : undefined;
    if (value === undefined) {
      throw new TemplateError(`template uses {{${s.name}}} at line ${s.line}, which has no value`);
    }
    const text = canonicalValue(value);
    if (!isSafeValue(text)) {
      throw new TemplateError(`value of {{${s.name}}} is not a safe parameter value: ${quoteForMessage(text)}`);
    }
    out += text;
  }
  return out;
}
