import { z } from 'zod';
import { crossFieldIssues, viewOfSpec } from './campaign-checks';
import { Cooldown, Design, Validity } from './design';
import { LogPhases } from './log-phases';
import { Metrics } from './metrics';
import { PowerBlock } from './power';
import { Identifier, ParamValue, quoteForMessage } from './param-value';
import { Resources } from './resources';
import { RUN_DIR_FILES } from './run-dir';
import { NET_INTERFACE } from './sensors';
import { SlurmOptions } from './slurm-options';
import { Strategy } from './strategy';

/** Control and format characters would garble terminals, logs and tables that show the name. */
const PRINTABLE = /^[^\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]*$/u;

export const CLUSTER_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const FILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
/** Files and folders erg writes itself into each run directory; a staged file must not overwrite them. */
export const RESERVED_FILE_NAMES: readonly string[] = Object.values(RUN_DIR_FILES);
/** Kept for erg's own later files: a name under these is never a user's. */
export const RESERVED_FILE_PREFIXES = ['erg.', 'slurm.'] as const;
export const MAX_FILE_BYTES = 1024 * 1024;

export const Execution = z.enum(['slurm', 'import']);
export type Execution = z.infer<typeof Execution>;

/** Most names a parameters map, zip group or exclude entry may have, and most inline files. */
export const MAX_NAMES = 64;

/** A record refused beyond `max` keys, with a message that says what to do. */
function atMostKeys<T extends z.ZodType<Record<string, unknown>>>(schema: T, max: number, what: string) {
  return schema.refine((record) => Object.keys(record).length <= max, {
    error: (iss) => `has ${Object.keys(iss.input as object).length} ${what}; at most ${max}`,
    params: { code: 'too_big' },
  });
}

/** The values one parameter takes: one axis of the grid, or one list of a zip group. */
export const ParamAxis = z.array(ParamValue).min(1).max(1000);

/** Parameters whose lists move together by position: `{ mb: [8, 4], seq: [4096, 8192] }` is 2 configurations. */
export const ZipGroup = atMostKeys(z.record(Identifier, ParamAxis), MAX_NAMES, 'parameters')
  .refine((group) => Object.keys(group).length > 0, { error: 'a zip group needs at least one parameter', params: { code: 'too_small' } });
export type ZipGroup = z.infer<typeof ZipGroup>;

/** Removes every configuration whose value for each named parameter equals (or is in) the given value(s). */
export const ExcludeEntry = atMostKeys(z.record(Identifier, z.union([ParamValue, ParamAxis])), MAX_NAMES, 'parameters')
  .refine((entry) => Object.keys(entry).length > 0, { error: 'an exclude entry needs at least one parameter', params: { code: 'too_small' } });
export type ExcludeEntry = z.infer<typeof ExcludeEntry>;

export const FileName = z
  .string()
  .regex(FILE_NAME, {
    error: (iss) =>
      `${quoteForMessage(String(iss.input))} is not an allowed file name: use letters, digits and _ . -, start with a letter, digit or _, at most 128 characters`,
  })
  .refine((name) => !(RESERVED_FILE_NAMES as readonly string[]).includes(name), {
    error: (iss) => `${quoteForMessage(String(iss.input))} is a name erg uses itself in the run directory; choose another name`,
    params: { code: 'reserved_name' },
  })
  .refine((name) => !RESERVED_FILE_PREFIXES.some((p) => name.startsWith(p)), {
    error: (iss) =>
      `${quoteForMessage(String(iss.input))}: names starting with ${RESERVED_FILE_PREFIXES.map((p) => `"${p}"`).join(' or ')} are reserved for erg`,
    params: { code: 'reserved_name' },
  });

/** A file's content; a template like `run`. Limited in bytes because that is what gets staged. */
export const FileTemplate = z
  .string()
  .max(MAX_FILE_BYTES)
  .refine((text) => new TextEncoder().encode(text).length <= MAX_FILE_BYTES, {
    error: `must be at most ${MAX_FILE_BYTES} bytes (1 MiB) in UTF-8`,
    params: { code: 'too_big' },
  });

export const Telemetry = z
  .strictObject({
    intervalMs: z.int().min(10).max(60_000).default(1000),
    idleBaselineS: z.number().min(0).max(3600).default(0),
    /** A run whose GPUs were throttled by power or heat for more than this share of its window is flagged `throttled`. */
    maxThrottledShare: z.number().min(0).max(1).default(0.1),
    /**
     * The network interfaces whose traffic the agents read (names, or prefixes ending in `*`:
     * `hsn*`); absent: the agent's default (every physical interface but the loopback, apps/agent/src/sources/net.ts).
     */
    netInterfaces: z
      .array(z.string().regex(NET_INTERFACE, { error: 'must be a network interface name (letters, digits, _ . @ + -, at most 15) or a prefix ending in * (hsn*)' }))
      .min(1)
      .max(32)
      .optional(),
  })
  .prefault({});
export type Telemetry = z.infer<typeof Telemetry>;

/** Every field and its own rules; the rules that relate fields live in campaign-checks.ts. */
export const CampaignSpecFields = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(128)
    .regex(PRINTABLE, { error: 'must not contain control or invisible formatting characters' }),
  description: z.string().max(4000).optional(),
  execution: Execution.default('slurm'),
  cluster: z
    .string()
    .regex(CLUSTER_NAME, {
      error: (iss) =>
        `${quoteForMessage(String(iss.input))} is not a cluster name: lower-case letters, digits and -, starting with a letter or digit, at most 63 characters`,
    })
    .optional(),
  repetitions: z.int().min(1).max(1000).default(1),
  /** How the campaign spends its runs: the full grid (default) or adaptive repetitions (strategy.ts). */
  strategy: Strategy,
  parameters: atMostKeys(z.record(Identifier, ParamAxis), MAX_NAMES, 'parameters').default({}),
  zip: z.array(ZipGroup).max(64).default([]),
  exclude: z.array(ExcludeEntry).max(1000).default([]),
  resources: Resources,
  slurm: SlurmOptions.optional(),
  /** The power state every node of a run is put in by the site's node helper (power.ts); templated per configuration. */
  power: PowerBlock.optional(),
  /**
   * Where the workload's code lives on the cluster (absolute): exported as ERG_WORKLOAD_DIR, and
   * its git commit is part of every run's provenance when it is a git work tree.
   */
  workloadDir: z
    .string()
    .regex(/^(\/[A-Za-z0-9._,:=+@-]+)+\/?$/, { error: (iss) => `${quoteForMessage(String(iss.input))} is not an absolute path of letters, digits and . _ , : = + @ -` })
    .max(1024)
    .refine((p) => !p.split('/').some((seg) => seg === '.' || seg === '..'), { error: 'must not contain "." or ".." segments' })
    .optional(),
  files: atMostKeys(z.record(FileName, FileTemplate), MAX_NAMES, 'files').default({}),
  run: z.string().min(1).max(65_536).optional(),
  metrics: Metrics,
  /** Phases read from the workload's stdout.log (log-phases.ts); absent: none, the workload may still write marks itself. */
  phases: LogPhases.optional(),
  telemetry: Telemetry,
  /** Run order, node balance and the confidence of the results' claims (design.ts). */
  design: Design,
  /** The gates a run's measurement must pass to count as valid (design.ts). */
  validity: Validity,
  /** A wait before each run until its nodes are back near idle (design.ts); absent: none. */
  cooldown: Cooldown.optional(),
});

/** A campaign: the workload, the parameter space to sweep, and what each run asks of Slurm. */
export const CampaignSpec = CampaignSpecFields.superRefine((spec, ctx) => {
  for (const issue of crossFieldIssues(viewOfSpec(spec))) {
    ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message, params: { code: issue.code } });
  }
});
/** A validated campaign, defaults filled in. */
export type CampaignSpec = z.output<typeof CampaignSpec>;
/** What an author may write: defaulted fields are optional. */
export type CampaignSpecInput = z.input<typeof CampaignSpec>;
