/**
 * The figures statistics count, projected from a run's stored result (run_energy.result): the one
 * owner of that projection. listConfigurationEnergies reads it in SQL (countedFiguresSql), so
 * that a campaign of 100,000 runs does not read every whole result; `erg verify` computes it in
 * JavaScript from a run's recomputed figures (countedFiguresOf), offline. Both follow
 * COUNTED_FIGURES, and a test stores results of every shape and holds the two equal, key order
 * included. This module imports nothing (`@erg/db/counted-figures`), so the CLI can bundle it.
 */

/** One member of the projection. */
type Projected =
  /** The value at this path in the result; null where any step is missing or not an object. */
  | { at: readonly string[] }
  /** The `check` of each element, in order, of the array at this path whose `status` is 'fail'; [] where there is none. */
  | { failed: readonly string[] }
  /** An object of these members, where the result has this member at its top (even a null); else null. */
  | { where: string; members: Readonly<Record<string, Projected>> };

/** What each row's `result` holds (@erg/energy StoredFigures): names, and where in the stored result each comes from. */
export const COUNTED_FIGURES: Readonly<Record<string, Projected>> = {
  timeS: { at: ['timeS'] },
  energyJ: { at: ['energyJ'] },
  edpJs: { at: ['edpJs'] },
  ed2pJs2: { at: ['ed2pJs2'] },
  avgPowerW: { at: ['avgPowerW'] },
  coverage: { at: ['coverage'] },
  components: { at: ['components'] },
  flags: { at: ['flags'] },
  carbonG: { at: ['carbon', 'gCO2e'] },
  costTotal: { at: ['cost', 'total'] },
  costCurrency: { at: ['cost', 'currency'] },
  costPerKWh: { at: ['cost', 'perKWh'] },
  validity: {
    where: 'validity',
    members: { valid: { at: ['validity', 'valid'] }, excluded: { at: ['validity', 'excluded'] }, reasons: { at: ['validity', 'reasons'] }, failed: { failed: ['validity', 'checks'] } },
  },
};

/** The members of a run's stored result that are read whole, where they are an object (listCampaignRunPhases, listCampaignRunDataMovement). */
export type ResultMember = 'phases' | 'dataMovement';

// ---- SQL ----

/** Names in COUNTED_FIGURES are erg's own; they go into SQL as literals, so they are held to letters and digits. */
function literal(name: string): string {
  if (!/^[A-Za-z][A-Za-z0-9]*$/.test(name)) throw new Error(`not a name for the projection: ${JSON.stringify(name)}`);
  return `'${name}'`;
}

/**
 * Where the projection reads a stored result: `column`, the jsonb itself (for `?`), and `members`,
 * the alias of countedMembersSql over it, whose columns are the result's top-level members read
 * once. A stored result over about 2 KB is kept compressed, and every `->` on the column itself
 * decompresses it again: twenty of them a row made 100,000 runs' figures take 3 s in Postgres.
 */
interface Source {
  column: string;
  members: string;
}

const pathSql = (source: Source, path: readonly string[]): string =>
  `${source.members}."${literal(path[0]!).slice(1, -1)}"${path.slice(1).map((k) => `->${literal(k)}`).join('')}`;

function projectedSql(source: Source, p: Projected): string {
  if ('at' in p) return pathSql(source, p.at);
  if ('failed' in p) {
    const array = pathSql(source, p.failed);
    return `COALESCE((SELECT jsonb_agg(c.value->'check' ORDER BY c.i) FROM jsonb_array_elements(CASE WHEN jsonb_typeof(${array}) = 'array' THEN ${array} END) WITH ORDINALITY AS c(value, i)
              WHERE c.value->>'status' = 'fail'), '[]'::jsonb)`;
  }
  // A member whose value is JSON null is an SQL null among `members`: only the result itself says whether it is there.
  return `CASE WHEN ${pathSql(source, [p.where])} IS NOT NULL OR ${source.column} ? ${literal(p.where)} THEN ${objectSql(source, p.members)} END`;
}

function objectSql(source: Source, members: Readonly<Record<string, Projected>>): string {
  return `jsonb_build_object(${Object.entries(members).map(([name, p]) => `${literal(name)}, ${projectedSql(source, p)}`).join(', ')})`;
}

/** The top-level members of a stored result the projection reads. */
function topMembers(members: Readonly<Record<string, Projected>>): string[] {
  const out = new Set<string>();
  for (const p of Object.values(members)) {
    if ('at' in p) out.add(p.at[0]!);
    else if ('failed' in p) out.add(p.failed[0]!);
    else {
      out.add(p.where);
      for (const m of topMembers(p.members)) out.add(m);
    }
  }
  return [...out];
}

/**
 * A row source for the FROM clause (`LEFT JOIN LATERAL … ON true`) that reads the top-level members
 * of the stored result in `column` once, as jsonb columns of `alias` (JSON null and a missing member
 * both read as SQL null there): what countedFiguresSql(column, alias) projects from.
 */
export function countedMembersSql(column: string, alias: string): string {
  return `jsonb_to_record(${column}) AS ${alias}(${topMembers(COUNTED_FIGURES).map((k) => `"${literal(k).slice(1, -1)}" jsonb`).join(', ')})`;
}

/** The projection in SQL, over a jsonb `column` holding a stored result and `members`, countedMembersSql of it (names of erg's own). */
export function countedFiguresSql(column: string, members: string): string {
  return objectSql({ column, members }, COUNTED_FIGURES);
}

// ---- JavaScript ----

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `->` step by step: null where a key is missing or a step is not an object. */
function atPath(value: unknown, path: readonly string[]): unknown {
  let v = value;
  for (const k of path) v = isObject(v) && k in v && v[k] !== undefined ? v[k] : null;
  return v;
}

function projected(result: Record<string, unknown>, p: Projected): unknown {
  if ('at' in p) return atPath(result, p.at);
  if ('failed' in p) {
    const checks = atPath(result, p.failed);
    return Array.isArray(checks) ? checks.filter((c) => isObject(c) && c.status === 'fail').map((c) => atPath(c, ['check'])) : [];
  }
  return p.where in result ? objectOf(result, p.members) : null;
}

function objectOf(result: Record<string, unknown>, members: Readonly<Record<string, Projected>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(members).map(([name, p]) => [name, projected(result, p)]));
}

/**
 * The projection of a stored result (as JSON would store it), as listConfigurationEnergies reads
 * it back: the same values, with every object's keys in jsonb's order. Null for no result.
 */
export function countedFiguresOf(result: Record<string, unknown> | null): Record<string, unknown> | null {
  return result === null ? null : (jsonbOrder(objectOf(result, COUNTED_FIGURES)) as Record<string, unknown>);
}

/** A member of a stored result as listCampaignRunPhases and listCampaignRunDataMovement read it: where it is an object; else undefined (the run has no row). */
export function resultMemberOf(result: Record<string, unknown> | null, member: ResultMember): Record<string, unknown> | undefined {
  const value = result?.[member];
  return isObject(value) ? (jsonbOrder(value) as Record<string, unknown>) : undefined;
}

/** A JSON value with every object's keys in the order Postgres's jsonb gives them back: shorter first, then by their bytes. */
export function jsonbOrder(value: unknown): Json {
  if (Array.isArray(value)) return value.map(jsonbOrder);
  if (!isObject(value)) return value as Json;
  const keys = Object.keys(value).sort((a, b) => {
    const ab = Buffer.from(a, 'utf8');
    const bb = Buffer.from(b, 'utf8');
    return ab.length - bb.length || Buffer.compare(ab, bb);
  });
  return Object.fromEntries(keys.map((k) => [k, jsonbOrder(value[k])]));
}
