/**
 * The cooldown plan: what the scheduler stages in a run's directory (run-dir's `erg.cooldown`) when
 * its campaign has a `cooldown` block, and every node's agent reads before the workload — the
 * block's thresholds and the idle reference of each node of the cluster erg knows one for (the
 * latest idle baseline measured there). Without zod: the agent's bundle imports this module as
 * `@erg/spec/cooldown-plan`, and the scheduler writes it from a validated spec.
 *
 * Words: an idle reference is a node's mean power over an idle baseline (by the energy selection
 * rules) and each GPU's mean temperature there; a node with one has cooled when its power over the
 * last settleS is within powerMargin of it (and every GPU within tempMarginC); a node without one
 * when two consecutive settleS means agree within powerMargin ("settled").
 */

/** A node's idle figures from the latest idle baseline erg measured on it. */
export interface IdleReference {
  node: string;
  /** Mean power over that baseline, by the energy selection rules; null: no power reading there. */
  powerW: number | null;
  /** Each GPU's mean temperature over that baseline, where it has a temperature sensor (gpuN.temp). */
  gpus: { gpu: number; tempC: number }[];
  /** The run whose baseline it is, and when that baseline ended (ISO 8601). */
  runId: string;
  measuredAt: string;
}

/** The thresholds of the spec's cooldown block (design.ts's Cooldown, defaults filled in). */
export interface CooldownThresholds {
  powerMargin: number;
  tempMarginC: number;
  settleS: number;
  maxWaitS: number;
}

export interface CooldownPlan extends CooldownThresholds {
  /** Always 1: the plan's format, so that a later format is never read as this one. */
  ergCooldown: 1;
  references: IdleReference[];
}

/**
 * Most idle references a plan carries: the nodes measured most recently first. Every run of a
 * submission batch stages its own copy, so the plan stays small enough (about 130 bytes a node)
 * for the batch's archive to compress the copies into almost nothing; a node beyond them waits
 * by the settled criterion.
 */
export const MAX_COOLDOWN_REFERENCES = 128;

/** The plan as staged: one JSON document and a newline. */
export function cooldownPlanText(plan: CooldownPlan): string {
  return `${JSON.stringify(plan)}\n`;
}

const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** The thresholds' ranges: design.ts's Cooldown; a staged plan outside them is not erg's. */
const RANGES: Record<keyof CooldownThresholds, [number, number]> = {
  powerMargin: [0, 10],
  tempMarginC: [0, 100],
  settleS: [1, 600],
  maxWaitS: [1, 3600],
};

/** What the agent reads of `erg.cooldown`: the plan, or why it is not one. */
export type ParsedCooldownPlan = { ok: true; plan: CooldownPlan } | { ok: false; reason: string };

/** Reads a staged plan, checking every field it uses; references that are not well formed are left out. */
export function parseCooldownPlan(text: string): ParsedCooldownPlan {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const v = value as Partial<Record<keyof CooldownPlan, unknown>> | null;
  if (v === null || typeof v !== 'object' || v.ergCooldown !== 1) return { ok: false, reason: 'not a cooldown plan (ergCooldown 1)' };
  const thresholds = {} as CooldownThresholds;
  for (const [key, [min, max]] of Object.entries(RANGES) as [keyof CooldownThresholds, [number, number]][]) {
    const x = v[key];
    if (!isNumber(x) || x < min || x > max) return { ok: false, reason: `${key} must be a number in [${min}, ${max}]` };
    thresholds[key] = x;
  }
  const references = Array.isArray(v.references) ? v.references.slice(0, MAX_COOLDOWN_REFERENCES).flatMap(referenceOf) : [];
  return { ok: true, plan: { ergCooldown: 1, ...thresholds, references } };
}

function referenceOf(value: unknown): IdleReference[] {
  const r = value as Partial<Record<keyof IdleReference, unknown>> | null;
  if (r === null || typeof r !== 'object' || typeof r.node !== 'string') return [];
  const powerW = isNumber(r.powerW) && r.powerW >= 0 ? r.powerW : null;
  const gpus = (Array.isArray(r.gpus) ? r.gpus : []).flatMap((g: unknown) => {
    const { gpu, tempC } = (g ?? {}) as { gpu?: unknown; tempC?: unknown };
    return Number.isInteger(gpu) && isNumber(tempC) ? [{ gpu: gpu as number, tempC }] : [];
  });
  return [{ node: r.node, powerW, gpus, runId: typeof r.runId === 'string' ? r.runId : '', measuredAt: typeof r.measuredAt === 'string' ? r.measuredAt : '' }];
}
