import type { CST } from 'yaml';
import { formatPath, ROOT_PATH, type SpecIssue } from './issues';

/**
 * Budgets on a decoded document (a campaign spec or a suite, from YAML or JSON) before any
 * schema looks at it. They keep what validation, storage and the CLI's printing cost in
 * proportion to a request's size: YAML aliases can make a small text decode into a huge value
 * (99 aliases of one 200 KB scalar are 20 MB), and a deeply nested value overflows the stack of
 * recursive code (JSON.stringify with indentation, the YAML parser itself).
 */
export const DOCUMENT_LIMITS = {
  /** Deepest nesting of lists and objects. A campaign spec needs 4 (`exclude[0].sp[1]`), a suite 5. */
  maxDepth: 32,
  /** Values (objects, lists, numbers, strings, booleans, nulls) in all. */
  maxNodes: 50_000,
  /** Characters of all keys and strings together, aliases expanded: one 1 MiB file (MAX_FILE_BYTES) and 64 Ki for the rest. */
  maxTextChars: 1024 * 1024 + 64 * 1024,
} as const;
export type DocumentLimits = { [K in keyof typeof DOCUMENT_LIMITS]: number };

/**
 * Whether a parsed JSON value nests deeper than `max` (lists and objects), without recursion and
 * stopping at the first path too deep: the check every JSON body gets before code that recurses.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= max) return true;
    // Arrays of numbers (telemetry columns) are passed over in one test per element.
    for (const item of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof item === 'object' && item !== null) stack.push([item, depth + 1]);
    }
  }
  return false;
}

function tooLarge(message: string): SpecIssue {
  return { path: ROOT_PATH, code: 'document_too_large', message };
}

/**
 * Whether a decoded document stays within the limits; walks it without recursion and stops at
 * the first limit passed, so the walk itself costs at most `maxNodes` steps. A value reached
 * twice (a YAML alias) is counted each time, as it would be stored.
 */
export function documentIssue(value: unknown, limits: DocumentLimits = DOCUMENT_LIMITS): SpecIssue | null {
  const stack: Array<[value: unknown, depth: number]> = [[value, 0]];
  let nodes = 0;
  let text = 0;
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    nodes += 1;
    if (nodes > limits.maxNodes) {
      return tooLarge(`has more than ${limits.maxNodes.toLocaleString('en-US')} values (lists, objects, numbers and strings) in all; split the study into smaller campaigns`);
    }
    if (typeof current === 'string') text += current.length;
    else if (typeof current === 'object' && current !== null) {
      if (depth >= limits.maxDepth) return tooLarge(`is nested more than ${limits.maxDepth} levels deep; a campaign spec needs at most 5`);
      if (Array.isArray(current)) {
        for (const item of current) stack.push([item, depth + 1]);
      } else {
        for (const [key, item] of Object.entries(current)) {
          text += key.length;
          stack.push([item, depth + 1]);
        }
      }
    }
    if (text > limits.maxTextChars) {
      return tooLarge(
        `has more than ${limits.maxTextChars.toLocaleString('en-US')} characters of text in all (keys and strings, YAML aliases expanded); inline files count too`,
      );
    }
  }
  // Within the limits, so this second walk is bounded by them too.
  return reservedKeyIssue(value);
}

/**
 * Keys that JavaScript objects treat specially, refused wherever erg reads a document or a JSON
 * body: assigning `__proto__` sets an object's prototype instead of adding a key (a file named so
 * in a YAML spec's `files` vanished without a word, and in a record it replaces the prototype),
 * and `constructor` and `prototype` are found on every object by a lookup, so a record keyed by a
 * user's names could answer for a name nobody wrote. No erg field is named so.
 */
export const RESERVED_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];
const RESERVED = new Set(RESERVED_KEYS);

/**
 * The first key of RESERVED_KEYS anywhere in a parsed value (own keys only: JSON.parse and the
 * YAML composer make `__proto__` an own key), as an issue at its path; null when there is none.
 * Walks without recursion, in time linear in the value; paths are built only for the key found.
 */
export function reservedKeyIssue(value: unknown): SpecIssue | null {
  type Visit = { value: unknown; parent: Visit | null; key: PropertyKey };
  const pathOf = (visit: Visit): PropertyKey[] => {
    const path: PropertyKey[] = [];
    for (let v: Visit | null = visit; v?.parent; v = v.parent) path.unshift(v.key);
    return path;
  };
  const stack: Visit[] = [{ value, parent: null, key: '' }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const current = visit.value;
    if (typeof current !== 'object' || current === null) continue;
    if (Array.isArray(current)) {
      for (let i = 0; i < current.length; i++) {
        const item: unknown = current[i];
        if (typeof item === 'object' && item !== null) stack.push({ value: item, parent: visit, key: i });
      }
      continue;
    }
    for (const key of Object.keys(current)) {
      if (RESERVED.has(key)) {
        return {
          path: formatPath([...pathOf(visit), key]),
          code: 'reserved_name',
          message: `"${key}" is a reserved name (${RESERVED_KEYS.join(', ')} mean something special to JavaScript objects); rename this key`,
        };
      }
      const item: unknown = (current as Record<string, unknown>)[key];
      if (typeof item === 'object' && item !== null) stack.push({ value: item, parent: visit, key });
    }
  }
  return null;
}

/**
 * How deeply a YAML document nests, measured on the concrete syntax tree that the YAML library's
 * parser builds without recursing, before the composer (which recurses: a few hundred levels
 * overflow its stack, and overflowing it again inside V8's regular expression compiler has
 * aborted the whole process). Walked with an explicit stack, so any depth is safe here.
 */
export function yamlNestingIssue(tokens: readonly CST.Token[], maxDepth: number = DOCUMENT_LIMITS.maxDepth): SpecIssue | null {
  const stack: Array<[token: CST.Token, depth: number]> = tokens.map((token) => [token, 0]);
  while (stack.length > 0) {
    const [token, depth] = stack.pop()!;
    if (token.type === 'document') {
      if (token.value) stack.push([token.value, depth]);
    } else if (token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection') {
      if (depth >= maxDepth) return tooLarge(`is nested more than ${maxDepth} levels deep; a campaign spec needs at most 5`);
      for (const item of token.items) {
        if ('key' in item && item.key) stack.push([item.key, depth + 1]);
        if (item.value) stack.push([item.value, depth + 1]);
      }
    }
  }
  return null;
}
