import { z } from 'zod';
import type { ClusterCapabilities } from './api';
import { POWER_KNOBS, type PowerKnob, type PowerState } from './node-info';
import { quoteForMessage } from './param-value';
import { renderTemplate } from './template';

/**
 * A campaign's `power` block: the power state every node of a run is put in before its workload
 * starts — GPU power limit, locked GPU clocks, the GH200 module cap, the CPUs' maximum frequency.
 * Each value is a whole number or a `{{parameter}}` template (`gpuPowerLimitW: "{{cap}}"`), so a
 * power cap is a sweep axis like any parameter. Templates are expanded per configuration and the
 * result is checked against the ranges below (expandPower); the node helper checks it again
 * against what each device supports, and refuses to run the workload otherwise.
 */

/** Sane ranges per knob: far outside any device's, but enough to catch W for kW or MHz for kHz. */
export const POWER_RANGES: Readonly<Record<PowerKnob, { min: number; max: number; unit: string }>> = {
  gpuPowerLimitW: { min: 1, max: 10_000, unit: 'W' },
  gpuLockedClocksMHz: { min: 1, max: 10_000, unit: 'MHz' },
  moduleLimitW: { min: 1, max: 20_000, unit: 'W' },
  cpuFreqKHz: { min: 1_000, max: 100_000_000, unit: 'kHz' },
};

/** A whole number, or digits and `{{parameter}}` placeholders. */
const TEMPLATED_NUMBER = /^(?:[0-9]|\{\{[ \t]*[A-Za-z_][A-Za-z0-9_]{0,63}[ \t]*\}\})+$/;

function knobValue(knob: PowerKnob) {
  const { min, max, unit } = POWER_RANGES[knob];
  // One schema, not a union of two: a value wrong in either form gets a message about that form.
  return z
    .union([z.number(), z.string().max(256)])
    .describe(`${unit}, ${min}–${max}, or a {{parameter}} template`)
    .superRefine((value, ctx) => {
      if (typeof value === 'number') {
        if (!Number.isInteger(value)) ctx.addIssue({ code: 'custom', message: `${value} is not a whole number of ${unit}`, input: value, params: { code: 'invalid_power_value' } });
        else if (value < min || value > max) ctx.addIssue({ code: 'custom', message: `${value} ${unit} is outside ${min}–${max} ${unit}`, input: value, params: { code: value < min ? 'too_small' : 'too_big' } });
      } else if (!TEMPLATED_NUMBER.test(value)) {
        ctx.addIssue({ code: 'invalid_format', format: 'regex', input: value, message: `${quoteForMessage(value)} is not a whole number of ${unit} or a {{parameter}} template such as "{{cap}}"` });
      }
    });
}

export const PowerBlock = z
  .strictObject({
    gpuPowerLimitW: knobValue('gpuPowerLimitW').optional().describe('every GPU’s power limit, W (nvidia-smi -pl)'),
    gpuLockedClocksMHz: z
      .union([knobValue('gpuLockedClocksMHz'), z.tuple([knobValue('gpuLockedClocksMHz'), knobValue('gpuLockedClocksMHz')])])
      .optional()
      .describe('every GPU’s locked graphics clocks, MHz: [min, max] or one value for both (nvidia-smi -lgc)'),
    moduleLimitW: knobValue('moduleLimitW').optional().describe('the GH200 module power cap, W: GPU + Grace + memory (nvidia-smi -pl --scope 1)'),
    cpuFreqKHz: knobValue('cpuFreqKHz').optional().describe('every CPU’s maximum frequency, kHz (cpufreq scaling_max_freq)'),
  })
  .refine((p) => Object.values(p).some((v) => v !== undefined), { error: 'name at least one of gpuPowerLimitW, gpuLockedClocksMHz, moduleLimitW, cpuFreqKHz, or leave power out', params: { code: 'too_small' } });
export type PowerBlock = z.infer<typeof PowerBlock>;

type Values = Readonly<Record<string, string | number | boolean>>;

/** The templates of a power block, by their spec path (`power.gpuLockedClocksMHz[1]`), for the placeholder checks. */
export function powerTemplates(power: unknown): Record<string, string> | undefined {
  if (typeof power !== 'object' || power === null) return undefined;
  const out: Record<string, string> = {};
  for (const [knob, value] of Object.entries(power)) {
    if (typeof value === 'string') out[knob] = value;
    if (Array.isArray(value)) value.forEach((v, i) => typeof v === 'string' && (out[`${knob}[${i}]`] = v));
  }
  return out;
}

/**
 * One configuration's power state: templates expanded with its parameters and every value checked
 * as a whole number in its knob's range; the issues name the configuration and the field
 * (`power.gpuPowerLimitW: configuration cap=5000000: 5000000 W is above 10000 W`).
 */
export function expandPower(power: PowerBlock, configurationKey: string, parameters: Values): { state: PowerState; issues: { path: string; message: string }[] } {
  const state: PowerState = {};
  const issues: { path: string; message: string }[] = [];
  const one = (knob: PowerKnob, value: number | string, path: string): number | null => {
    let text: string;
    try {
      text = typeof value === 'number' ? String(value) : renderTemplate(value, parameters);
    } catch (err) {
      issues.push({ path, message: `configuration ${configurationKey}: ${(err as Error).message}` });
      return null;
    }
    const { min, max, unit } = POWER_RANGES[knob];
    const n = /^\d{1,12}$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isInteger(n)) issues.push({ path, message: `configuration ${configurationKey}: ${quoteForMessage(text)} is not a whole number of ${unit}` });
    else if (n < min || n > max) issues.push({ path, message: `configuration ${configurationKey}: ${n} ${unit} is outside ${min}–${max} ${unit}` });
    else return n;
    return null;
  };
  for (const knob of ['gpuPowerLimitW', 'moduleLimitW', 'cpuFreqKHz'] as const) {
    const value = power[knob];
    if (value === undefined) continue;
    const n = one(knob, value, `power.${knob}`);
    if (n !== null) state[knob] = n;
  }
  const clocks = power.gpuLockedClocksMHz;
  if (clocks !== undefined) {
    const [lo, hi] = Array.isArray(clocks)
      ? [one('gpuLockedClocksMHz', clocks[0], 'power.gpuLockedClocksMHz[0]'), one('gpuLockedClocksMHz', clocks[1], 'power.gpuLockedClocksMHz[1]')]
      : ((n) => [n, n])(one('gpuLockedClocksMHz', clocks, 'power.gpuLockedClocksMHz'));
    if (lo !== null && hi !== null) {
      if (lo > hi) issues.push({ path: 'power.gpuLockedClocksMHz', message: `configuration ${configurationKey}: the minimum ${lo} MHz is above the maximum ${hi} MHz` });
      else state.gpuLockedClocksMHz = [lo, hi];
    }
  }
  return { state, issues };
}

/** The knobs a power block sets. */
export function powerKnobsOf(power: PowerBlock | PowerState): PowerKnob[] {
  return POWER_KNOBS.filter((k) => power[k] !== undefined);
}

/**
 * Whether a cluster can set what a power block asks, from what the scheduler's probe found:
 * `unknown` while the cluster has not been probed; else why not, in words an admin can act on.
 * The API asks before a campaign is accepted (422 / 409) and the scheduler again before each
 * run is submitted — a run never starts at a state it did not ask for.
 */
export function powerSupport(cluster: { name: string; capabilities: ClusterCapabilities | null }, power: PowerBlock | PowerState): { ok: true } | { ok: false; unknown: boolean; message: string } {
  const caps = cluster.capabilities;
  if (caps === null) return { ok: false, unknown: true, message: `cluster ${cluster.name} has not been probed yet, so whether it can set a power state is not known` };
  if (caps.powerHelper === null) {
    return {
      ok: false,
      unknown: false,
      message: `cluster ${cluster.name} cannot set a power state: ${caps.powerHelperProblem ?? 'no node helper answered'}; leave \`power\` out to measure at the nodes' own state, or ask the cluster's admins to install erg's node helper`,
    };
  }
  const refused = powerKnobsOf(power).filter((k) => !caps.powerHelper!.knobs.includes(k));
  if (refused.length > 0) {
    return { ok: false, unknown: false, message: `cluster ${cluster.name}'s node helper does not allow ${refused.join(', ')} (it allows ${caps.powerHelper.knobs.join(', ') || 'no knob'})` };
  }
  return { ok: true };
}
