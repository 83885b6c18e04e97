import os from 'node:os';
import { parseArgs } from 'node:util';
// zod/mini rather than zod's classic API: the same schemas and checks, tree-shaken in the bundle
// (about 2 MB of RSS instead of 12 MB, which matters against the agent's 50 MB budget).
import * as z from 'zod/mini';
import { NODE_FILE_SUFFIXES, RUN_DIR_FILES } from '@erg/spec/run-dir';
import { NET_INTERFACE } from '@erg/spec/sensors';
import { SOURCE_NAMES, type SourceName } from './wire';
import { ErgError } from '@erg/spec/errors';

// The agent's whole configuration: command-line options, each of which may also come from the
// environment as ERG_AGENT_<OPTION> (e.g. --spool-dir ↔ ERG_AGENT_SPOOL_DIR; the command line
// wins), and what the job's environment says of the job for the node's fingerprint (`job`:
// JOB_ENVIRONMENT). Parsed once, at start-up, by the one schema below; nothing else reads argv or env.

const required = (what: string) => (iss: { input?: unknown }) => (iss.input === undefined ? 'is required' : what);

const int = (min: number, max: number) =>
  z.coerce.number({ error: 'must be a number' }).check(
    z.refine((n: number) => Number.isInteger(n), 'must be a whole number'),
    z.minimum(min, `must be ≥ ${min}`),
    z.maximum(max, `must be ≤ ${max}`),
  );
const watts = () => z.coerce.number({ error: 'must be a number (W)' }).check(z.minimum(0, 'must be ≥ 0'), z.maximum(100_000, 'must be ≤ 100000'));
const path = (what: string) => z.string({ error: required(what) }).check(z.minLength(1, 'must not be empty'));

const Sources = z.pipe(
  z._default(z.string(), 'auto'),
  z.transform((s: string, ctx): 'auto' | SourceName[] => {
    const trimmed = s.trim();
    if (trimmed === 'auto') return 'auto';
    const names = trimmed.split(',').map((x) => x.trim()).filter((x) => x !== '');
    const bad = names.filter((n) => !(SOURCE_NAMES as readonly string[]).includes(n));
    if (names.length === 0 || bad.length > 0) {
      ctx.issues.push({ code: 'custom', input: s, message: `expected "auto" or a comma-separated list of ${SOURCE_NAMES.join(', ')}; got ${JSON.stringify(s)}` });
      return 'auto';
    }
    return [...new Set(names)] as SourceName[];
  }),
);

const NetInterfaces = z.pipe(
  z._default(z.string(), 'auto'),
  z.transform((s: string, ctx): 'auto' | string[] => {
    const trimmed = s.trim();
    if (trimmed === 'auto') return 'auto';
    const names = trimmed.split(',').map((x) => x.trim()).filter((x) => x !== '');
    const bad = names.filter((n) => !NET_INTERFACE.test(n) || n === '.' || n === '..');
    if (names.length === 0 || bad.length > 0) {
      ctx.issues.push({ code: 'custom', input: s, message: `expected "auto" or a comma-separated list of interface names (a trailing * matches a prefix: hsn*); got ${JSON.stringify(s)}` });
      return 'auto';
    }
    return [...new Set(names)];
  }),
);

/**
 * The job's environment variables the fingerprint reads. LOADEDMODULES: the environment modules
 * loaded (Environment Modules and Lmod, ':'-separated). The container the job runs in, the first
 * of: ERG_CONTAINER_IMAGE (set by the job script or the user: an image path or name, with
 * ERG_CONTAINER_DIGEST its digest when known), APPTAINER_CONTAINER / SINGULARITY_CONTAINER (the
 * image Apptainer/Singularity runs, set inside the container), SLURM_CONTAINER (srun/sbatch
 * --container: the OCI bundle), PYXIS_CONTAINER_IMAGE (pyxis's default --container-image).
 */
export const JOB_ENVIRONMENT = {
  modules: 'LOADEDMODULES',
  containerImage: ['ERG_CONTAINER_IMAGE', 'APPTAINER_CONTAINER', 'SINGULARITY_CONTAINER', 'SLURM_CONTAINER', 'PYXIS_CONTAINER_IMAGE'],
  containerDigest: 'ERG_CONTAINER_DIGEST',
} as const;
type ContainerVariable = (typeof JOB_ENVIRONMENT.containerImage)[number];

const Job = z.object({
  /** LOADEDMODULES, in load order. */
  loadedModules: z.array(z.string()),
  /** The container image and where it was named; null: the job runs in none erg can tell. */
  container: z.nullable(z.object({ image: z.string(), digest: z.nullable(z.string()), from: z.enum(JOB_ENVIRONMENT.containerImage) })),
});
export type JobEnvironment = z.infer<typeof Job>;

/** What the job's environment (JOB_ENVIRONMENT) says of the job. */
export function jobEnvironment(env: NodeJS.ProcessEnv): JobEnvironment {
  const value = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const loadedModules = (value(JOB_ENVIRONMENT.modules) ?? '').split(':').filter((m) => m !== '');
  const from = JOB_ENVIRONMENT.containerImage.find((name) => value(name) !== undefined) as ContainerVariable | undefined;
  const container = from === undefined ? null : { image: value(from) as string, digest: value(JOB_ENVIRONMENT.containerDigest) ?? null, from };
  return { loadedModules, container };
}

export const AgentConfig = z
  .object({
    /** The run this job belongs to (erg's run id). */
    runId: z.uuid({ error: required('must be the run id (a UUID)') }),
    /** Where `<node>.spool`, `.acked`, `.meta.json`, `.ready` and `.stats.json` go; created if missing. */
    spoolDir: path('must be a directory path'),
    /** erg's API base URL; absent → spool only (the scheduler pulls the spool at job end). */
    apiUrl: z.optional(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })),
    /** File holding the run-scoped bearer token; required with --api-url. */
    tokenFile: z.optional(path('must be a file path')),
    /** Sampling period (ms). */
    intervalMs: z._default(int(10, 3_600_000), 1000),
    /** A batch is closed, spooled and queued for pushing every this many ms. */
    batchMs: z._default(int(10, 3_600_000), 1000),
    /** This node's name in batches and spool file names. Default: os.hostname(). */
    node: z._default(
      z.string().check(z.regex(/^[A-Za-z0-9._-]{1,128}$/, 'letters, digits, ".", "_" and "-" only (it names files)')),
      () => os.hostname(),
    ),
    /** CPU power model (used only when no power sensor exists): idle and full-load watts. */
    modelIdleW: z._default(watts(), 60),
    modelMaxW: z._default(watts(), 250),
    /** Roots of sysfs and procfs (fixtures in tests). */
    sysfsRoot: z._default(path('must be a directory'), '/'),
    procfsRoot: z._default(path('must be a directory'), '/proc'),
    /** NVML library loaded through koffi. */
    nvmlLib: z._default(path('must be a library path or name'), 'libnvidia-ml.so.1'),
    /** nvidia-smi binary, the fallback when NVML through koffi is unavailable. */
    nvidiaSmi: z._default(path('must be a program path or name'), 'nvidia-smi'),
    /** DCGM's CLI, for the link traffic of its profiling fields (`dcgmi dmon`); absent on the node: no dcgm source. */
    dcgmi: z._default(path('must be a program path or name'), 'dcgmi'),
    /** The perf tool, for Grace's host memory traffic from its SCF uncore PMU (`perf stat`); absent on the node: no perf source. */
    perf: z._default(path('must be a program path or name'), 'perf'),
    /** "auto" or a comma-separated list of sources to use. */
    sources: Sources,
    /** The network interfaces the net source reads: "auto" (sources/net.ts) or names and prefixes (`hsn*`). */
    netInterfaces: NetInterfaces,
    /** On SIGTERM/SIGINT, how long to keep pushing unacknowledged batches before exiting. */
    drainMs: z._default(int(0, 600_000), 3000),
    /** A batch is closed early once it holds this many samples (the API takes at most 200 000: spec's MAX_BATCH_SAMPLES). */
    maxBatchSamples: z._default(int(1, 200_000), 50_000),
    /** srun, asked once (`srun --version`) for Slurm's version in the node's fingerprint. */
    srun: z._default(path('must be a program path or name'), 'srun'),
    /** The run's cooldown plan (job.sh passes erg.cooldown when the campaign has a cooldown): the agent writes `<node>.cooled.json` once its node is back near idle. */
    cooldownFile: z.optional(path('must be a file path')),
    /** The campaign's workload directory (job.sh passes ERG_WORKLOAD_DIR): its git commit goes into the fingerprint. Empty: none. */
    workloadDir: z.optional(z.pipe(z.string(), z.transform((s: string) => (s.trim() === '' ? undefined : s)))),
    /** The environment's PATH, where a bare --nvidia-smi name is looked up. */
    path: z.optional(z.string()),
    /** What the job's environment says of the job (not an option: JOB_ENVIRONMENT). */
    job: z._default(Job, () => ({ loadedModules: [], container: null })),
    /** stderr log level; quiet (warnings and errors only) by default. */
    logLevel: z._default(z.enum(['debug', 'info', 'warn', 'error', 'silent'], 'must be debug, info, warn, error or silent'), 'warn'),
  })
  .check(
    z.refine((c) => c.modelMaxW >= c.modelIdleW, { path: ['modelMaxW'], message: 'must be ≥ --model-idle-w' }),
    z.refine((c) => c.apiUrl === undefined || c.tokenFile !== undefined, {
      path: ['tokenFile'],
      message: 'is required with --api-url (a file holding the run token)',
    }),
  );
export type AgentConfig = z.infer<typeof AgentConfig>;

/** Option name (kebab-case, as on the command line) → config key. */
const OPTIONS = {
  'run-id': 'runId',
  'spool-dir': 'spoolDir',
  'api-url': 'apiUrl',
  'token-file': 'tokenFile',
  'interval-ms': 'intervalMs',
  'batch-ms': 'batchMs',
  node: 'node',
  'model-idle-w': 'modelIdleW',
  'model-max-w': 'modelMaxW',
  'sysfs-root': 'sysfsRoot',
  'procfs-root': 'procfsRoot',
  'nvml-lib': 'nvmlLib',
  'nvidia-smi': 'nvidiaSmi',
  dcgmi: 'dcgmi',
  perf: 'perf',
  srun: 'srun',
  'workload-dir': 'workloadDir',
  cooldown: 'cooldownFile',
  sources: 'sources',
  'net-interfaces': 'netInterfaces',
  'drain-ms': 'drainMs',
  'max-batch-samples': 'maxBatchSamples',
  'log-level': 'logLevel',
} as const satisfies Record<string, keyof AgentConfig>;

export const USAGE = `erg-agent — erg's telemetry agent: samples this node's power, energy and utilisation sensors,
appends every batch durably to a spool file and pushes it to erg's API.

Usage:
  node erg-agent.js --run-id <uuid> --spool-dir <dir> [options]
  node erg-agent.js doctor [--seconds 30] [--json <file>] [options]
                             first contact with a node: sources and scopes, versions against
                             erg's floors, counters vs integrated power, GPU + Grace ≤ Module
                             (doctor --help)

Options (each also read from the environment as ERG_AGENT_<OPTION>, e.g. ERG_AGENT_SPOOL_DIR):
  --run-id <uuid>            erg's run id (required)
  --spool-dir <dir>          where <node>${Object.entries(NODE_FILE_SUFFIXES).filter(([file]) => file !== 'power').map(([, suffix]) => suffix).join('/')} go (required)
  --api-url <url>            erg's API; without it the agent only spools
  --token-file <file>        file holding the run's bearer token (required with --api-url)
  --interval-ms <ms>         sampling period (default 1000)
  --batch-ms <ms>            batch period (default 1000)
  --node <name>              node name (default: the host name)
  --model-idle-w <W>         CPU power model, idle watts (default 60)
  --model-max-w <W>          CPU power model, full-load watts (default 250)
  --sysfs-root <dir>         root under which sys/class/... is read (default /)
  --procfs-root <dir>        procfs mount (default /proc)
  --nvml-lib <path>          NVML library (default libnvidia-ml.so.1)
  --nvidia-smi <path>        nvidia-smi binary, used when NVML is unavailable (default nvidia-smi)
  --dcgmi <path>             DCGM's dcgmi, for PCIe/NVLink/C2C traffic from its profiling fields (default dcgmi)
  --perf <path>              the perf tool, for Grace's host memory traffic from its SCF PMU (default perf)
  --srun <path>              srun binary, asked once for Slurm's version (default srun)
  --workload-dir <dir>       the campaign's workload directory; its git commit goes into the node's fingerprint
  --cooldown <file>          the run's cooldown plan (${RUN_DIR_FILES.cooldown}): write <node>${NODE_FILE_SUFFIXES.cooled} once this node is
                             back near its idle power (and GPU temperature), or at the plan's maxWaitS
  --sources auto|<list>      sources to use: auto, or a list of ${SOURCE_NAMES.join(',')}
  --net-interfaces auto|<list>
                             network interfaces whose traffic the net source reads: auto (every one
                             but lo; only the physical ones where there are any), or names, a
                             trailing * matching a prefix (hsn*,ib0)
  --drain-ms <ms>            on SIGTERM, push unacknowledged batches for at most this long (default 3000)
  --max-batch-samples <n>    close a batch early at this many samples (default 50000, at most 200000)
  --log-level <level>        debug|info|warn|error|silent (default warn); JSON lines on stderr
  --help                     print this text

Sources (autodetected): nvml (needs the koffi package resolvable, e.g. through NODE_PATH),
nvidia-smi, dcgm (dcgmi dmon, where DCGM's host engine runs), hwmon (GH200 power meters), rapl,
resctrl (host memory traffic, where /sys/fs/resctrl is mounted), perf (Grace's host memory traffic
from its SCF PMU, through perf stat; needs perf_event_paranoid <= 0 or CAP_PERFMON), infiniband
(RDMA ports' traffic counters under /sys/class/infiniband), net (network interfaces' tx/rx bytes,
/sys/class/net), procfs, and a
labelled CPU power model used only when no power sensor exists.

The node's fingerprint (sent with the first batch, and in <node>${NODE_FILE_SUFFIXES.meta}) also reads the job's
environment: ${JOB_ENVIRONMENT.modules}, and the container from the first of
  ${JOB_ENVIRONMENT.containerImage.join(', ')}
(its digest from ${JOB_ENVIRONMENT.containerDigest}). The node helper's <node>${NODE_FILE_SUFFIXES.power} in the spool
directory, when there is one, is sent with it.

Signals: SIGTERM, SIGINT or SIGUSR2 (what ${RUN_DIR_FILES.jobScript} sends: srun forwards it) take a last sample,
spool it, push for at most --drain-ms, write <node>${NODE_FILE_SUFFIXES.stats} and exit 0.
`;

export type ParsedCommandLine = { help: true } | { help: false; config: AgentConfig };

/** Thrown for a command line or environment the agent cannot run with; the message says what to fix. */
export class ConfigError extends ErgError<'ERG_AGENT_CONFIG'> {
  constructor(message: string) {
    super('ERG_AGENT_CONFIG', message);
  }
}

/** Parses the command line and environment, once, into the agent's configuration. */
export function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): ParsedCommandLine {
  const options: Record<string, { type: 'string' } | { type: 'boolean'; short?: string }> = { help: { type: 'boolean', short: 'h' } };
  for (const name of Object.keys(OPTIONS)) options[name] = { type: 'string' };
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new ConfigError(`${(err as Error).message}\n\nRun with --help for usage.`);
  }
  if (values.help === true) return { help: true };

  const raw: Record<string, unknown> = {};
  for (const [option, key] of Object.entries(OPTIONS)) {
    const fromEnv = env[`ERG_AGENT_${option.toUpperCase().replace(/-/g, '_')}`];
    const value = values[option] ?? (fromEnv === '' ? undefined : fromEnv);
    if (value !== undefined) raw[key] = value;
  }
  if (env.PATH !== undefined) raw.path = env.PATH;
  raw.job = jobEnvironment(env);
  const result = AgentConfig.safeParse(raw);
  if (!result.success) {
    const byKey = Object.fromEntries(Object.entries(OPTIONS).map(([o, k]) => [k, o]));
    const lines = result.error.issues.map((i) => {
      const key = String(i.path[0] ?? '');
      const option = byKey[key];
      return `  ${option ? `--${option}` : key || '(options)'}: ${i.message}`;
    });
    throw new ConfigError(`invalid agent options:\n${lines.join('\n')}\n\nRun with --help for usage.`);
  }
  return { help: false, config: result.data };
}
