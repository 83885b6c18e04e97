/**
 * fast-check arbitraries from the API's own OpenAPI document (JSON Schema 2020-12, as
 * fastify-type-provider-zod renders the zod schemas of packages/spec), for the fuzz test.
 *
 * Two kinds of value come out of `arbitraryFor`:
 * - `valid`: what the schema describes (lengths, ranges, enums, patterns, required properties),
 *   kept small so that requests are cheap; the generator's own test checks these against Ajv.
 * - with `junk > 0`: the same, except that at any node a random JSON value may stand in for
 *   what the schema wants — the near-miss inputs that find holes in validation.
 */
import fc from 'fast-check';

export type JsonSchema = Record<string, unknown>;

export interface ArbitraryOptions {
  /** The whole document, to resolve `$ref: #/components/schemas/…`. */
  document: JsonSchema;
  /** Probability (0…1) that a node is replaced by an arbitrary JSON value. 0: valid values only. */
  junk?: number;
  /** Longest array generated (schemas allow thousands; requests stay small). */
  maxItems?: number;
  /** Longest string generated where the schema allows more. */
  maxLength?: number;
  /** Deepest nesting of objects and arrays followed; deeper optional parts are left out. */
  maxDepth?: number;
}

const JSON_VALUE = fc.jsonValue({ maxDepth: 3 });

export function arbitraryFor(schema: JsonSchema | boolean | undefined, options: ArbitraryOptions): fc.Arbitrary<unknown> {
  return build(schema, { maxItems: 4, maxLength: 40, maxDepth: 6, junk: 0, ...options }, 0);
}

type Options = Required<ArbitraryOptions>;

function build(schema: JsonSchema | boolean | undefined, o: Options, depth: number): fc.Arbitrary<unknown> {
  const wanted = schemaArbitrary(schema, o, depth);
  if (o.junk <= 0) return wanted;
  const weight = Math.max(1, Math.round(1 / o.junk) - 1);
  return fc.oneof({ arbitrary: wanted, weight }, { arbitrary: JSON_VALUE, weight: 1 });
}

function resolve(schema: JsonSchema, o: Options): JsonSchema {
  let s = schema;
  for (let hops = 0; typeof s['$ref'] === 'string' && hops < 16; hops++) {
    const ref = s['$ref'];
    const name = /^#\/components\/schemas\/(.+)$/.exec(ref)?.[1];
    const target = name ? ((o.document['components'] as { schemas?: Record<string, JsonSchema> } | undefined)?.schemas?.[decodeURIComponent(name)]) : undefined;
    if (!target) throw new Error(`cannot resolve ${ref}`);
    const { $ref: _ignored, ...rest } = s;
    s = { ...target, ...rest };
  }
  return s;
}

function schemaArbitrary(raw: JsonSchema | boolean | undefined, o: Options, depth: number): fc.Arbitrary<unknown> {
  if (raw === undefined || raw === true) return JSON_VALUE;
  if (raw === false) return fc.constant(null);
  const schema = resolve(raw, o);
  if ('const' in schema) return fc.constant(schema['const']);
  if (Array.isArray(schema['enum'])) return fc.constantFrom(...(schema['enum'] as unknown[]));
  const alternatives = (schema['anyOf'] ?? schema['oneOf']) as JsonSchema[] | undefined;
  if (Array.isArray(alternatives) && alternatives.length > 0) {
    return fc.oneof(...alternatives.map((alt) => schemaArbitrary({ ...withoutKeys(schema, ['anyOf', 'oneOf']), ...alt }, o, depth)));
  }
  if (Array.isArray(schema['allOf']) && (schema['allOf'] as JsonSchema[]).length > 0) {
    // zod renders intersections rarely; the first part is a fair approximation for fuzzing.
    return schemaArbitrary({ ...withoutKeys(schema, ['allOf']), ...(schema['allOf'] as JsonSchema[])[0] }, o, depth);
  }
  const type = schema['type'];
  if (Array.isArray(type)) return fc.oneof(...type.map((t) => schemaArbitrary({ ...schema, type: t }, o, depth)));
  switch (type) {
    case 'null': return fc.constant(null);
    case 'boolean': return fc.boolean();
    case 'integer': return integerArbitrary(schema);
    case 'number': return numberArbitrary(schema);
    case 'string': return stringArbitrary(schema, o);
    case 'array': return arrayArbitrary(schema, o, depth);
    case 'object': return objectArbitrary(schema, o, depth);
    default:
      if (schema['properties'] || schema['additionalProperties']) return objectArbitrary(schema, o, depth);
      return JSON_VALUE;
  }
}

function withoutKeys(schema: JsonSchema, keys: string[]): JsonSchema {
  return Object.fromEntries(Object.entries(schema).filter(([k]) => !keys.includes(k)));
}

function num(schema: JsonSchema, key: string): number | undefined {
  const v = schema[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function integerArbitrary(schema: JsonSchema): fc.Arbitrary<number> {
  const exMin = num(schema, 'exclusiveMinimum');
  const exMax = num(schema, 'exclusiveMaximum');
  const min = Math.max(num(schema, 'minimum') ?? -1e6, exMin !== undefined ? Math.floor(exMin) + 1 : -Infinity, Number.MIN_SAFE_INTEGER);
  const max = Math.min(num(schema, 'maximum') ?? 1e6, exMax !== undefined ? Math.ceil(exMax) - 1 : Infinity, Number.MAX_SAFE_INTEGER);
  return fc.integer({ min: Math.ceil(min), max: Math.floor(Math.max(min, max)) });
}

function numberArbitrary(schema: JsonSchema): fc.Arbitrary<number> {
  const min = num(schema, 'minimum') ?? num(schema, 'exclusiveMinimum') ?? -1e6;
  const max = num(schema, 'maximum') ?? num(schema, 'exclusiveMaximum') ?? 1e6;
  const exclusive = schema['exclusiveMinimum'] !== undefined || schema['exclusiveMaximum'] !== undefined;
  return fc
    .double({ min, max: Math.max(min, max), noNaN: true, noDefaultInfinity: true, minExcluded: schema['exclusiveMinimum'] !== undefined, maxExcluded: schema['exclusiveMaximum'] !== undefined })
    .filter((v) => !exclusive || (v !== min && v !== max))
    .map((v) => (Object.is(v, -0) ? 0 : v));
}

function stringArbitrary(schema: JsonSchema, o: Options): fc.Arbitrary<string> {
  const minLength = num(schema, 'minLength') ?? 0;
  const maxLength = Math.max(minLength, Math.min(num(schema, 'maxLength') ?? o.maxLength, o.maxLength));
  const inLength = (s: string) => [...s].length >= minLength && [...s].length <= (num(schema, 'maxLength') ?? Infinity);
  switch (schema['format']) {
    case 'uuid': return fc.uuid();
    case 'date-time': return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'email': return fc.emailAddress();
    case 'uri': return fc.webUrl();
    default: break;
  }
  if (typeof schema['pattern'] === 'string') {
    let re: RegExp;
    try {
      re = new RegExp(schema['pattern'], 'u');
    } catch {
      re = new RegExp(schema['pattern']);
    }
    try {
      return fc.stringMatching(re, { size: 'small' }).filter(inLength);
    } catch {
      // fast-check cannot build every class (negated Unicode properties): filter plain strings.
      return fc.string({ minLength, maxLength, unit: 'grapheme' }).filter((s) => re.test(s));
    }
  }
  return fc.string({ minLength, maxLength, unit: 'grapheme-ascii' });
}

function arrayArbitrary(schema: JsonSchema, o: Options, depth: number): fc.Arbitrary<unknown[]> {
  const minItems = num(schema, 'minItems') ?? 0;
  const maxItems = Math.max(minItems, Math.min(num(schema, 'maxItems') ?? o.maxItems, o.maxItems));
  if (depth >= o.maxDepth && minItems === 0) return fc.constant([]);
  const items = schema['items'] as JsonSchema | undefined;
  const prefix = schema['prefixItems'] as JsonSchema[] | undefined;
  if (Array.isArray(prefix)) return fc.tuple(...prefix.map((p) => build(p, o, depth + 1)));
  return fc.array(build(items, o, depth + 1), { minLength: minItems, maxLength: maxItems });
}

function objectArbitrary(schema: JsonSchema, o: Options, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema['properties'] ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema['required'] ?? []) as string[]);
  const shallow = depth >= o.maxDepth;
  const known: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, sub] of Object.entries(properties)) {
    if (shallow && !required.has(name)) continue;
    known[name] = build(sub, o, depth + 1);
  }
  const fixed = fc.record(known, { requiredKeys: [...required].filter((k) => k in known) });
  const extra = schema['additionalProperties'];
  if (!extra || typeof extra !== 'object' || shallow) return fixed;
  // A record (z.record): keys from propertyNames, values from additionalProperties.
  const names = schema['propertyNames'] as JsonSchema | undefined;
  const nameSchema = names ? resolve(names, o) : undefined;
  const nameEnum = nameSchema?.['enum'] as string[] | undefined;
  // An enum of key names (z.partialRecord over a z.enum) picks among them; else a string of that shape.
  const key = nameEnum
    ? fc.constantFrom(...nameEnum)
    : nameSchema
      ? (stringArbitrary({ type: 'string', ...nameSchema }, o) as fc.Arbitrary<string>)
      : fc.string({ minLength: 1, maxLength: 12, unit: 'grapheme-ascii' });
  const minProps = num(schema, 'minProperties') ?? 0;
  const entries = fc.dictionary(key.filter((k) => !(k in properties) && k !== '__proto__'), build(extra as JsonSchema, o, depth + 1), {
    minKeys: minProps,
    maxKeys: Math.max(minProps, Math.min(num(schema, 'maxProperties') ?? o.maxItems, o.maxItems)),
  });
  return fc.tuple(fixed, entries).map(([a, b]) => ({ ...b, ...a }));
}
