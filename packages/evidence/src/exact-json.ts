/**
 * Exact JSON: JSON that gives back the very values it was written from, so that a bundle's inputs
 * recompute the very figures erg stored. Plain JSON loses what the inputs may hold: Maps (a
 * campaign's run nodes), bigints, Dates, -0, NaN and ±Infinity. Each of these is written as an
 * object {"$erg": kind, "v": …}; an object of the data's own with a "$erg" key is written as
 * {"$erg": "object", "v": its entries}, so that no object of the data is ever read as a tag.
 * Everything else is plain JSON, and so is the whole file: any JSON reader opens it.
 */

/** The key of a tag. */
export const TAG = '$erg';

type Tagged = { [TAG]: 'Map' | 'Set' | 'bigint' | 'Date' | 'number' | 'object' | 'Float64Array'; v: unknown };

const tag = (kind: Tagged[typeof TAG], v: unknown): Tagged => ({ [TAG]: kind, v });

/** A number JSON cannot hold (-0, NaN, ±Infinity) as text; null for one it can. */
function specialNumber(n: number): string | null {
  if (Object.is(n, -0)) return '-0';
  return Number.isFinite(n) ? null : String(n);
}

function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  // `this[key]` is the value before toJSON (a Date's toJSON has made `value` a string).
  const raw = this[key];
  if (raw instanceof Date) return tag('Date', Number.isNaN(raw.getTime()) ? null : raw.toISOString());
  if (typeof raw === 'number') {
    const special = specialNumber(raw);
    return special === null ? raw : tag('number', special);
  }
  if (typeof raw === 'bigint') return tag('bigint', raw.toString());
  if (raw instanceof Map) return tag('Map', [...raw.entries()]);
  if (raw instanceof Set) return tag('Set', [...raw.values()]);
  if (raw instanceof Float64Array) return tag('Float64Array', Array.from(raw));
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw) && Object.hasOwn(raw, TAG)) return tag('object', Object.entries(raw));
  return value;
}

/** Whether `value` is a tag this module wrote (an object with exactly "$erg" and "v"). */
function isTag(value: object): value is Tagged {
  const keys = Object.keys(value);
  return keys.length === 2 && Object.hasOwn(value, TAG) && Object.hasOwn(value, 'v') && typeof (value as Tagged)[TAG] === 'string';
}

/** `value` as exact JSON text (`indent`: spaces, as JSON.stringify's). */
export function stringifyExact(value: unknown, indent?: number): string {
  // JSON.stringify calls the replacer once per property: the tags it returns are not passed to it
  // again, only their members.
  return JSON.stringify(value, replacer, indent);
}

function reviver(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !isTag(value)) return value;
  const v = value.v;
  switch (value[TAG]) {
    case 'Map':
      return new Map(v as [unknown, unknown][]);
    case 'Set':
      return new Set(v as unknown[]);
    case 'bigint':
      return BigInt(v as string);
    case 'Date':
      return new Date(v === null ? Number.NaN : (v as string));
    case 'number':
      return v === '-0' ? -0 : Number(v);
    case 'object':
      return Object.fromEntries(v as [string, unknown][]);
    case 'Float64Array':
      return Float64Array.from(v as number[]);
    default:
      throw new Error(`exact JSON: unknown tag ${JSON.stringify(value[TAG])}`);
  }
}

/** The value exact JSON text was written from. Throws SyntaxError on text that is not JSON. */
export function parseExact(text: string): unknown {
  return JSON.parse(text, reviver);
}
