import { z } from 'zod';
import { quoteForMessage } from './param-value';
import { renderTemplate } from './template';

// Option values are written into `#SBATCH --flag=value` lines. This set has no meaning to sbatch's
// directive parser or to the shell, and leaves out `%` so Slurm's filename patterns cannot appear.
const OPTION_VALUE = /^[A-Za-z0-9_.,:=+@/-]{1,128}$/;

/**
 * A value with `{{parameter}}` placeholders between characters of that set (`gpuFreq: "{{clock}}"`):
 * the power knobs a study sweeps. It is expanded per configuration and checked then, like a plain
 * value (sweep's validateCampaign), so a value Slurm would reject is refused before anything runs.
 */
const TEMPLATED_VALUE = /^(?:[A-Za-z0-9_.,:=+@/-]|\{\{[ \t]*[A-Za-z_][A-Za-z0-9_]{0,63}[ \t]*\}\})+$/;

/** Whether an option value holds placeholders (and so is checked per configuration, after expansion). */
export function isTemplatedOption(value: unknown): value is string {
  return typeof value === 'string' && value.includes('{{');
}

const FREQ_LEVEL = /^(low|medium|high|highm1|\d{1,7})$/;
const CPU_GOVERNOR = /^(Conservative|OnDemand|Performance|PowerSave|SchedUtil|UserSpace)$/;

/**
 * What Slurm accepts for the options with a grammar of their own (sbatch(1)); null when the value
 * is fine. `--gpu-freq=[<type>=]<value>[,<type>=<value>][,verbose]` (type `memory`; value low,
 * medium, high, highm1 or MHz); `--cpu-freq=<p1>[-<p2>[:<p3>]]` (kHz or a level, and a governor).
 */
export function slurmOptionValueIssue(key: string, value: string): string | null {
  if (!OPTION_VALUE.test(value)) {
    return `${quoteForMessage(value)} is not an allowed sbatch option value: use 1 to 128 letters, digits and _ . , : = + @ / -`;
  }
  if (key === 'gpuFreq') {
    const seen = new Set<string>();
    for (const item of value.split(',')) {
      if (item === 'verbose') continue;
      const [type, level] = item.includes('=') ? item.split('=', 2) : ['graphics', item];
      if ((type !== 'memory' && type !== 'graphics') || !FREQ_LEVEL.test(level ?? '') || seen.has(type!)) {
        return `${quoteForMessage(value)} is not a --gpu-freq value: use a level (low, medium, high, highm1) or MHz, optionally memory=<level or MHz> and verbose, e.g. "1410" or "high,memory=medium"`;
      }
      seen.add(type!);
    }
  }
  if (key === 'cpuFreq') {
    const m = /^([^-:]+)(?:-([^-:]+)(?::([^-:]+))?)?$/.exec(value);
    const ok = m !== null && (FREQ_LEVEL.test(m[1]!) || CPU_GOVERNOR.test(m[1]!)) && (m[2] === undefined || FREQ_LEVEL.test(m[2])) && (m[3] === undefined || CPU_GOVERNOR.test(m[3]));
    if (!ok) {
      return `${quoteForMessage(value)} is not a --cpu-freq value: use kHz or a level (low, medium, high, highm1) or a governor, or <min>-<max>[:<governor>], e.g. "2400000" or "1000000-2400000:Performance"`;
    }
  }
  return null;
}

/** An option's value: a plain value checked now, or a template checked per configuration after expansion. */
const optionValue = (key: string) =>
  z
    .string()
    .max(256)
    .superRefine((value, ctx) => {
      if (isTemplatedOption(value)) {
        if (!TEMPLATED_VALUE.test(value)) {
          ctx.addIssue({ code: 'invalid_format', format: 'regex', input: value, message: `${quoteForMessage(value)} is not an allowed sbatch option template: {{parameter}} placeholders between letters, digits and _ . , : = + @ / -` });
        }
        return;
      }
      const issue = slurmOptionValueIssue(key, value);
      // invalid_format, as a failed regex reports: the code people (and their scripts) already see.
      if (issue) ctx.addIssue({ code: 'invalid_format', format: 'regex', message: issue, input: value });
    });

const shape = {
  account: optionValue('account').optional(),
  qos: optionValue('qos').optional(),
  reservation: optionValue('reservation').optional(),
  wckey: optionValue('wckey').optional(),
  gpuFreq: optionValue('gpuFreq').optional(),
  cpuFreq: optionValue('cpuFreq').optional(),
  gpuBind: optionValue('gpuBind').optional(),
  distribution: optionValue('distribution').optional(),
  hint: optionValue('hint').optional(),
  licenses: optionValue('licenses').optional(),
  threadsPerCore: z.int().min(1).max(64).optional(),
  signal: optionValue('signal').optional(),
};
export type SlurmOptionKey = keyof typeof shape;

/** The sbatch flag each allow-listed option becomes; the renderer writes `#SBATCH <flag>=<value>`. */
export const SLURM_OPTION_FLAGS: Readonly<Record<SlurmOptionKey, `--${string}`>> = {
  account: '--account',
  qos: '--qos',
  reservation: '--reservation',
  wckey: '--wckey',
  gpuFreq: '--gpu-freq',
  cpuFreq: '--cpu-freq',
  gpuBind: '--gpu-bind',
  distribution: '--distribution',
  hint: '--hint',
  licenses: '--licenses',
  threadsPerCore: '--threads-per-core',
  signal: '--signal',
};

const ALLOWED = Object.keys(shape).join(', ');

/**
 * Extra sbatch options, allow-listed: anything that could redirect output, change the working
 * directory, wrap the script or run it as someone else (`chdir`, `output`, `wrap`, `uid`, …) is
 * left out on purpose, because erg owns those.
 */
export const SlurmOptions = z.strictObject(shape, {
  error: (iss) => {
    if (iss.code !== 'unrecognized_keys') return undefined;
    const names = iss.keys.map((k) => JSON.stringify(k)).join(', ');
    return iss.keys.length === 1
      ? `sbatch option ${names} is not allowed; allowed: ${ALLOWED}`
      : `sbatch options ${names} are not allowed; allowed: ${ALLOWED}`;
  },
});
export type SlurmOptions = z.infer<typeof SlurmOptions>;

/**
 * The options of one configuration: templated values expanded with its parameters. Throws
 * TemplateError where a placeholder names no parameter (validation reports that first).
 */
export function expandSlurmOptions(options: SlurmOptions, parameters: Readonly<Record<string, string | number | boolean>>): SlurmOptions {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) out[key] = isTemplatedOption(value) ? renderTemplate(value, parameters) : value;
  return out as SlurmOptions;
}

/**
 * Problems with one configuration's expanded options — a value Slurm would reject — each naming
 * the configuration and the field, e.g. `slurm.gpuFreq: configuration clock=99999x: …`.
 */
export function slurmOptionIssues(options: SlurmOptions, configurationKey: string, parameters: Readonly<Record<string, string | number | boolean>>): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  for (const [key, value] of Object.entries(options)) {
    if (!isTemplatedOption(value)) continue;
    let expanded: string;
    try {
      expanded = renderTemplate(value, parameters);
    } catch (err) {
      issues.push({ path: `slurm.${key}`, message: `configuration ${configurationKey}: ${(err as Error).message}` });
      continue;
    }
    const problem = slurmOptionValueIssue(key, expanded);
    if (problem) issues.push({ path: `slurm.${key}`, message: `configuration ${configurationKey}: ${problem}` });
  }
  return issues;
}
