import { z } from 'zod';
import type { SpecIssue } from './issues';

/**
 * Carbon and cost: what a cluster says of its electricity and its price (in its body), the grid
 * carbon intensity over time (PUT /v1/clusters/{name}/carbon-intensity), what a run's figures
 * were computed with (RunCarbon, RunCost in its energy result), and the objectives a campaign's
 * Pareto front may be decided on. The math is @erg/energy's carbon-cost.ts; docs/energy.md
 * ("Carbon and cost") is the contract.
 *
 * Glossary:
 *   intensity   grams of CO₂-equivalent emitted per kWh drawn from the grid (gCO2e/kWh).
 *   PUE         power usage effectiveness: the facility's energy over the IT equipment's (≥ 1):
 *               what the nodes drew is multiplied by it for the energy the site drew.
 *   node-hour   one node for one hour of the workload window (nodes × timeS / 3600).
 */

/** Upper bound of an intensity: coal-fired generation is about 1,000 gCO2e/kWh. */
export const MAX_G_CO2E_PER_KWH = 5_000;

const Intensity = z
  .number({ error: 'a number of grams of CO₂-equivalent per kWh, e.g. 350' })
  .min(0, { error: 'must be at least 0 gCO2e/kWh' })
  .max(MAX_G_CO2E_PER_KWH, { error: `must be at most ${MAX_G_CO2E_PER_KWH} gCO2e/kWh (coal-fired generation is about 1,000): is it in grams per kWh, not per MWh?` });

/** A cluster's grid carbon intensity (a constant) and its PUE. */
export const ClusterCarbon = z
  .object({
    gCO2ePerKWh: Intensity.optional().describe(
      "the grid's carbon intensity, gCO2e per kWh: used where the cluster's series (PUT /v1/clusters/{name}/carbon-intensity) does not cover a run's window; omitted: only the series",
    ),
    pue: z
      .number({ error: 'a number: the facility\'s energy over its IT equipment\'s, e.g. 1.2' })
      .min(1, { error: "must be at least 1 (1: no overhead; a site's PUE is its total energy over its IT equipment's, typically 1.1-1.6)" })
      .max(5, { error: 'must be at most 5 (a PUE above 2 is rare; is it a percentage?)' })
      .default(1)
      .describe("power usage effectiveness of the site (≥ 1, default 1): what the nodes drew × PUE is what the site drew, for carbon and for the price per kWh"),
  })
  .strict()
  .meta({ id: 'ClusterCarbon' });
export type ClusterCarbon = z.infer<typeof ClusterCarbon>;

const CURRENCIES: ReadonlySet<string> = new Set(typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('currency') : []);

/** An ISO 4217 currency code (checked against the codes the runtime knows, where it lists them). */
export const Currency = z
  .string({ error: 'an ISO 4217 currency code such as EUR, USD or CHF' })
  .regex(/^[A-Z]{3}$/, { error: 'an ISO 4217 currency code: three upper-case letters such as EUR, USD or CHF' })
  // One issue per value: the list is only asked about three upper-case letters.
  .refine((c) => CURRENCIES.size === 0 || !/^[A-Z]{3}$/.test(c) || CURRENCIES.has(c), { error: (iss) => `"${String(iss.input)}" is not an ISO 4217 currency code (such as EUR, USD or CHF)` });

const Price = (what: string) =>
  z
    .number({ error: `a price in the cluster's currency ${what}` })
    .min(0, { error: `must be at least 0: the price ${what}` })
    .max(1_000_000, { error: `must be at most 1000000 ${what}` });

/** What a cluster's runs cost: per node-hour of the workload window, per kWh the site drew, or both. */
export const ClusterPrice = z
  .object({
    perNodeHour: Price('of one node for one hour').optional().describe('price of one node for one hour of the workload window (nodes × timeS / 3600: queue wait and the idle baseline are not billed, as they are not in timeS)'),
    perKWh: Price('of one kWh').optional().describe('price of one kWh the site drew (the nodes\' energy × the PUE of `carbon`, 1 without it)'),
    currency: Currency.describe('ISO 4217, e.g. EUR or USD: every cost of the cluster\'s runs is in it'),
  })
  .strict()
  .refine((p) => p.perNodeHour !== undefined || p.perKWh !== undefined, {
    error: 'give perNodeHour, perKWh or both: the price of a node-hour of the workload and of a kWh the site drew',
  })
  .meta({ id: 'ClusterPrice' });
export type ClusterPrice = z.infer<typeof ClusterPrice>;

/** A cluster's carbon settings as the API shows them. */
export const ClusterCarbonView = z
  .object({
    gCO2ePerKWh: z.number().nullable().describe('the constant intensity; null: only the series'),
    pue: z.number(),
  })
  .meta({ id: 'ClusterCarbonView' });

/** A cluster's price as the API shows it. */
export const ClusterPriceView = z
  .object({ perNodeHour: z.number().nullable(), perKWh: z.number().nullable(), currency: z.string() })
  .meta({ id: 'ClusterPriceView' });

/** Times of points before this are refused: 2000-01-01, which also catches seconds sent as ms. */
const MIN_POINT_MS = Date.UTC(2000, 0, 1);
/** …and after this: 2100-01-01. */
const MAX_POINT_MS = Date.UTC(2100, 0, 1);
const ISO_DATETIME = z.iso.datetime({ offset: true });

/** A point's time in Unix ms, or why it is not one (for the issue at its path). */
export function carbonPointMs(t: string | number): { ms: number } | { why: string } {
  if (typeof t === 'string') {
    if (!ISO_DATETIME.safeParse(t).success) return { why: `"${t.slice(0, 40)}" is not an ISO 8601 date and time with its offset, e.g. 2026-12-04T12:00:00Z (or Unix milliseconds)` };
    const ms = Date.parse(t);
    return ms >= MIN_POINT_MS && ms < MAX_POINT_MS ? { ms } : { why: `${t} is not between 2000 and 2100` };
  }
  if (!Number.isFinite(t)) return { why: 'Unix milliseconds must be finite' };
  if (t >= MIN_POINT_MS / 1000 && t < MAX_POINT_MS / 1000) return { why: `${t} looks like Unix seconds: send milliseconds (× 1000) or an ISO 8601 time` };
  return t >= MIN_POINT_MS && t < MAX_POINT_MS ? { ms: t } : { why: `${t} ms is not between 2000 and 2100 (Unix milliseconds, or an ISO 8601 time)` };
}

/** One value of a cluster's carbon intensity series. */
export const CarbonIntensityPoint = z
  .object({
    t: z
      .union([z.string().max(64), z.number()])
      .superRefine((t, ctx) => {
        const r = carbonPointMs(t);
        if ('why' in r) ctx.addIssue({ code: 'custom', message: r.why });
      })
      .describe('when the value starts to hold: ISO 8601 with an offset (2026-12-04T12:00:00Z) or Unix milliseconds; it holds until the next point\'s time'),
    gCO2ePerKWh: Intensity,
  })
  .strict()
  .meta({ id: 'CarbonIntensityPoint' });
export type CarbonIntensityPoint = z.infer<typeof CarbonIntensityPoint>;

/** Most points one PUT takes (a year of hourly values is 8,760). */
export const MAX_CARBON_POINTS_PER_REQUEST = 10_000;
/** Most points a cluster keeps (about 11 years of hourly values, or 2 of 5-minute ones). */
export const MAX_CARBON_POINTS_PER_CLUSTER = 100_000;

/**
 * PUT /v1/clusters/{name}/carbon-intensity: points merged into the stored series — every stored
 * point from the first given time to the last given time is replaced by the given ones, points
 * outside that span are kept — or, with `replace`, the series becomes exactly the given points.
 */
export const CarbonIntensityPut = z
  .object({
    points: z
      .array(CarbonIntensityPoint)
      .max(MAX_CARBON_POINTS_PER_REQUEST, { error: `must have at most ${MAX_CARBON_POINTS_PER_REQUEST} points: send a longer series in several requests (each merges into the stored one)` })
      .describe('in any order; two points at the same time are refused'),
    replace: z
      .boolean()
      .default(false)
      .describe('true: the series becomes exactly these points ([] clears it); false: they replace the stored points within their span, and the rest are kept'),
  })
  .strict()
  .meta({ id: 'CarbonIntensityPut' });
export type CarbonIntensityPut = z.infer<typeof CarbonIntensityPut>;

/** What the schema cannot check of a series: two points at the same time. Paths are the body's. */
export function carbonIntensityIssues(points: readonly CarbonIntensityPoint[]): SpecIssue[] {
  const first = new Map<number, number>();
  const issues: SpecIssue[] = [];
  points.forEach((p, i) => {
    const r = carbonPointMs(p.t);
    if (!('ms' in r)) return;
    const j = first.get(r.ms);
    if (j === undefined) first.set(r.ms, i);
    else issues.push({ path: `points[${i}].t`, code: 'duplicate_value', message: `the same time as points[${j}] (${new Date(r.ms).toISOString()}): give each time one value` });
  });
  return issues;
}

/** A cluster's stored series, in short: how many points and the span of their times. */
export const CarbonIntensitySeries = z
  .object({
    points: z.int().describe(`points stored (at most ${MAX_CARBON_POINTS_PER_CLUSTER})`),
    from: z.string().nullable().describe('the first point\'s time (ISO 8601); null: none'),
    to: z.string().nullable().describe('the last point\'s time; null: none'),
  })
  .meta({ id: 'CarbonIntensitySeries' });
export type CarbonIntensitySeries = z.infer<typeof CarbonIntensitySeries>;

/** The answer to PUT /v1/clusters/{name}/carbon-intensity. */
export const CarbonIntensityWritten = z
  .object({
    cluster: z.string(),
    stored: z.int().describe('points stored by this request'),
    replaced: z.int().describe('stored points it replaced (within its span; with replace, every one)'),
    series: CarbonIntensitySeries.describe('the series now'),
  })
  .meta({ id: 'CarbonIntensityWritten' });
export type CarbonIntensityWritten = z.infer<typeof CarbonIntensityWritten>;

/** Most points GET /v1/clusters/{name}/carbon-intensity returns at once. */
export const MAX_CARBON_POINTS_PER_READ = 10_000;

/** GET /v1/clusters/{name}/carbon-intensity?from=&to=: the stored points in time order. */
export const CarbonIntensityQuery = z.object({
  from: z.iso.datetime({ offset: true, error: 'an ISO 8601 date and time with its offset, e.g. 2026-12-04T00:00:00Z' }).optional().describe('points at or after this time'),
  to: z.iso.datetime({ offset: true, error: 'an ISO 8601 date and time with its offset, e.g. 2026-12-05T00:00:00Z' }).optional().describe('points at or before this time'),
});

export const CarbonIntensityView = z
  .object({
    cluster: z.string(),
    series: CarbonIntensitySeries.describe('the whole stored series'),
    points: z.array(z.object({ t: z.string().describe('ISO 8601'), gCO2ePerKWh: z.number() })).describe(`the points in the range asked for, in time order; at most ${MAX_CARBON_POINTS_PER_READ}`),
    truncated: z.boolean().describe(`true when the range holds more than ${MAX_CARBON_POINTS_PER_READ} points (the first ones are returned: ask again from the last one's time)`),
  })
  .meta({ id: 'CarbonIntensity' });
export type CarbonIntensityView = z.infer<typeof CarbonIntensityView>;

/** A run's carbon figure and what it was computed with (provenance). */
export const RunCarbon = z
  .object({
    gCO2e: z.number().describe('grams of CO₂-equivalent: energyKWh × pue × gCO2ePerKWh'),
    energyKWh: z.number().describe("the run's energyJ in kWh (what the nodes drew, before the PUE)"),
    pue: z.number().describe("the cluster's PUE when the figure was computed"),
    gCO2ePerKWh: z.number().describe('the grid intensity applied: the constant, or the series\' time-weighted mean over the workload window'),
    source: z.enum(['constant', 'series']).describe("series: the cluster's series covered (part of) the window; constant: it did not, and the cluster's gCO2ePerKWh was used"),
    series: z
      .object({
        points: z.int().describe('points whose span overlaps the window'),
        firstMs: z.number().describe('the first such point\'s time (Unix ms)'),
        lastMs: z.number(),
        coverage: z.number().describe('0–1: the share of the window the series covers; the rest takes the cluster\'s constant where it has one, else the series\' mean'),
      })
      .nullable()
      .describe('with source series: the points used; null otherwise'),
    note: z.string().describe('how the intensity was chosen, in words'),
  })
  .meta({ id: 'RunCarbon' });
export type RunCarbon = z.infer<typeof RunCarbon>;

/** A run's cost and what it was computed with (provenance). */
export const RunCost = z
  .object({
    total: z.number().describe('nodeTimeCost + energyCost (the parts the cluster prices), in currency'),
    currency: z.string(),
    nodes: z.int().describe("the job's nodes (Slurm's node list; for an import, the nodes that sent telemetry)"),
    nodeHours: z.number().describe('nodes × timeS / 3600: the workload window only — queue wait, agent start-up and the idle baseline are excluded, as from timeS'),
    perNodeHour: z.number().nullable().describe("the cluster's price per node-hour then; null: not priced per node-hour"),
    nodeTimeCost: z.number().nullable().describe('nodeHours × perNodeHour'),
    energyKWh: z.number().describe("the run's energyJ in kWh (before the PUE)"),
    pue: z.number().describe("the PUE applied (the cluster's carbon.pue, 1 without it)"),
    perKWh: z.number().nullable().describe("the cluster's price per kWh then; null: not priced per kWh"),
    energyCost: z.number().nullable().describe('energyKWh × pue × perKWh'),
  })
  .meta({ id: 'RunCost' });
export type RunCost = z.infer<typeof RunCost>;

/**
 * What a campaign's Pareto front may be decided on, each minimised: time (s), energy (J), edp
 * (J·s), carbon (gCO2e), cost (the cluster's currency). Per configuration, the mean of each over
 * the runs that measured both objectives.
 */
export const OBJECTIVES = ['time', 'energy', 'edp', 'carbon', 'cost'] as const;
export const Objective = z.enum(OBJECTIVES);
export type Objective = z.infer<typeof Objective>;
export const DEFAULT_OBJECTIVES: readonly [Objective, Objective] = ['time', 'energy'];

/** `time,carbon` → ['time', 'carbon'], or why it is not two distinct objectives. */
export function parseObjectives(text: string): { ok: true; objectives: [Objective, Objective] } | { ok: false; message: string } {
  const parts = text.split(',').map((s) => s.trim());
  const wrong = () => `two distinct objectives separated by a comma, of ${OBJECTIVES.join(', ')} (e.g. time,carbon); got "${text.slice(0, 80)}"`;
  const bad = parts.filter((p) => !(OBJECTIVES as readonly string[]).includes(p));
  if (bad.length > 0) return { ok: false, message: `${bad.map((b) => `"${b.slice(0, 40)}"`).join(', ')} ${bad.length === 1 ? 'is not an objective' : 'are not objectives'}: ${wrong()}` };
  if (parts.length !== 2 || parts[0] === parts[1]) return { ok: false, message: wrong() };
  return { ok: true, objectives: [parts[0] as Objective, parts[1] as Objective] };
}

/** The `objectives` query parameter: absent → time,energy. */
export const ObjectivesQuery = z
  .string()
  .max(200)
  .optional()
  .transform((text, ctx): [Objective, Objective] => {
    if (text === undefined) return [...DEFAULT_OBJECTIVES];
    const parsed = parseObjectives(text);
    if (parsed.ok) return parsed.objectives;
    ctx.addIssue({ code: 'custom', message: parsed.message });
    return z.NEVER;
  })
  .describe(`the two objectives the Pareto front is decided on, comma-separated, of ${OBJECTIVES.join(', ')}; default time,energy`);
