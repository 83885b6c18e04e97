import { z } from 'zod';

/**
 * Parameter, metric and placeholder names. Identifiers never need quoting anywhere (shell
 * variable, Slurm directive, SQL column label, configuration key), so they are kept this narrow.
 */
export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/**
 * The security boundary for parameter values. Values are substituted into shell scripts; none of
 * these characters means anything to bash in any context (unquoted, double-quoted, single-quoted,
 * heredoc), so a value can neither run code nor change how the surrounding line is split.
 * Deliberately absent: whitespace, quotes, `$`, backtick, `;|&<>()*?[]{}~#!\`, newline.
 * `;` being absent is also what makes configuration keys unambiguous.
 */
export const SAFE_VALUE = /^[A-Za-z0-9._,:=+/@%^-]{1,256}$/;

const SAFE_CHAR = /[A-Za-z0-9._,:=+/@%^-]/;
const MAX_VALUE_LENGTH = 256;
const ALLOWED_IN_WORDS = 'letters, digits and . _ , : = + / @ % ^ -';

export function isSafeValue(value: string): boolean {
  return SAFE_VALUE.test(value);
}

/** Says which characters of `value` are refused, so the author can fix the value at once. */
export function unsafeValueMessage(value: string): string {
  if (value.length === 0) return 'value is empty; a parameter value needs at least one character';
  if (value.length > MAX_VALUE_LENGTH) {
    return `value is ${value.length} characters long; parameter values may have at most ${MAX_VALUE_LENGTH} — put long text in a file under files: instead`;
  }
  const bad: string[] = [];
  for (const ch of value) if (!SAFE_CHAR.test(ch) && !bad.includes(ch)) bad.push(ch);
  const shown = bad.map((ch) => JSON.stringify(ch)).join(', ');
  return `value ${quoteForMessage(value)} contains ${shown} which ${bad.length === 1 ? 'is' : 'are'} not allowed in parameter values (allowed: ${ALLOWED_IN_WORDS}); put free text in a file under files: instead`;
}

/** JSON quoting keeps control characters visible and the message on one line. */
export function quoteForMessage(value: string, max = 80): string {
  const cut = value.length > max ? `${value.slice(0, max)}…` : value;
  return JSON.stringify(cut);
}

export const Identifier = z.string().regex(IDENTIFIER, {
  error: (iss) =>
    `${quoteForMessage(String(iss.input))} is not a valid name: use letters, digits and _, start with a letter or _, at most 64 characters`,
});

const SafeString = z.string().regex(SAFE_VALUE, { error: (iss) => unsafeValueMessage(String(iss.input)) });

/** A value a parameter can take: a finite number, a boolean, or a string of SAFE_VALUE characters. */
export const ParamValue = z.union([z.number(), z.boolean(), SafeString], {
  error: (iss) => {
    if (iss.code !== 'invalid_union') return undefined;
    if (typeof iss.input === 'number') return `${iss.input} is not a finite number`;
    return `expected a number, boolean or string, got ${typeName(iss.input)}`;
  },
});
export type ParamValue = z.infer<typeof ParamValue>;

/**
 * The one text form of a value: what templates substitute and configuration keys contain. Numbers
 * use JavaScript's shortest round-trip form (4 → "4", 0.5 → "0.5"), so `1`, `1.0` and `"1"` are
 * the same value. Every canonical value matches SAFE_VALUE (digits, `.`, `-`, `+`, `e`).
 */
export function canonicalValue(value: ParamValue): string {
  return typeof value === 'string' ? value : String(value);
}

/** The type name used in messages: `string`, `number`, `array`, `null`, `object`, … */
export function typeName(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'array';
  return typeof input;
}
