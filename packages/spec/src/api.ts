import { z } from 'zod';
import { POWER_KNOBS } from './node-info';
import { CampaignRunOrder } from './run-order';
import { RunState } from './run-state-schema';
import { NodeFingerprintSchema, PowerRecordSchema } from './telemetry';
import type { SpecIssue } from './issues';
import { CarbonIntensitySeries, ClusterCarbon, ClusterCarbonView, ClusterPrice, ClusterPriceView } from './carbon-cost';
import { RunCooldown } from './run-cooldown';
import { CLOCK_SKEW_MS, EARLIEST_MEASUREMENT_MS, MAX_METRIC_MAGNITUDE, MAX_WINDOW_MS, windowIssue } from './bounds';
import { ClusterNodeReport } from './node-doctor';

/**
 * Request and response bodies of the REST API. These schemas validate requests, shape the
 * OpenAPI document served at /openapi.json, and (through openapi-typescript) type the client.
 */

/** Where erg may put run directories: the same rule the job renderer enforces on them. */
export const REMOTE_DIR = /^(\/[A-Za-z0-9._,:=+@-]+)+$/;

export const ClusterName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, {
  error: 'use 1-63 lower-case letters, digits and -, starting with a letter or digit',
});

/**
 * How the scheduler trusts a cluster's SSH host key. `pinned`: only the fingerprint given at
 * registration. `trust-on-first-use`: the first successful connection records the fingerprint it
 * saw, which is pinned from then on.
 */
export const HostKeyPolicy = z.enum(['pinned', 'trust-on-first-use']);
export type HostKeyPolicy = z.infer<typeof HostKeyPolicy>;

/**
 * The rule ClusterCreate cannot carry itself (PUT omits `name` from it, and zod refuses `.omit`
 * on refined objects): a pinned cluster needs its fingerprint. Null when the body is fine.
 */
export function clusterHostKeyIssue(body: { hostKeyPolicy: HostKeyPolicy; hostKeySha256?: string | undefined }): SpecIssue | null {
  if (body.hostKeyPolicy === 'pinned' && body.hostKeySha256 === undefined) {
    return {
      path: 'hostKeySha256',
      code: 'required',
      message: 'required with hostKeyPolicy "pinned": the fingerprint from `ssh-keyscan -p <port> <host> | ssh-keygen -lf -` (or set hostKeyPolicy "trust-on-first-use")',
    };
  }
  return null;
}

/**
 * Every rule of a cluster body that relates fields (see clusterHostKeyIssue for why they are not
 * in the schema): the fingerprint of a pinned cluster, and a power model whose watts rise from
 * idle to full load. Empty when the body is fine. (Whether the private key parses is the API's
 * check: it needs the SSH client.)
 */
export function clusterBodyIssues(body: { hostKeyPolicy: HostKeyPolicy; hostKeySha256?: string | undefined; modelIdleW: number; modelMaxW: number }): SpecIssue[] {
  const issues: SpecIssue[] = [];
  const hostKey = clusterHostKeyIssue(body);
  if (hostKey) issues.push(hostKey);
  if (body.modelIdleW > body.modelMaxW) {
    issues.push({
      path: 'modelMaxW',
      code: 'too_small',
      message: `must be at least modelIdleW (${body.modelIdleW} W): the power model rises from modelIdleW at 0 % load to modelMaxW at 100 %`,
    });
  }
  return issues;
}

/**
 * The rule a jump host cannot carry itself: a certificate belongs to the jump host's own key.
 * `at` is the body path of the list (`jumpHosts`). Empty when fine.
 */
export function jumpHostIssues(jumpHosts: readonly { privateKey?: string | undefined; certificate?: string | undefined }[], at = 'jumpHosts'): SpecIssue[] {
  return jumpHosts.flatMap((j, i) =>
    j.certificate !== undefined && j.privateKey === undefined
      ? [{
          path: `${at}[${i}].privateKey`,
          code: 'required',
          message: "required with a certificate: a jump host's certificate is for its own key (without privateKey and certificate, it uses the cluster's)",
        }]
      : [],
  );
}

const HOSTNAME = z.hostname();
const IPV6 = z.ipv6();
/** A DNS name or an IP address, as ssh would be given it (no leading "-", no empty labels). */
function isHost(host: string): boolean {
  return HOSTNAME.safeParse(host).success || IPV6.safeParse(host).success;
}

/** Where deploy/node-helper/install.sh puts the helper. */
export const DEFAULT_POWER_HELPER = '/usr/local/sbin/erg-power-helper';

/** How a cluster's agents get their Node.js: `auto` (probe), `command` (the cluster's agentCommand, always), `staged` (erg's own, always). */
export const AGENT_RUNTIME_SETTINGS = ['auto', 'command', 'staged'] as const;
export type AgentRuntimeSetting = (typeof AGENT_RUNTIME_SETTINGS)[number];
/** The platforms erg vendors a runtime for (apps/agent/runtime). */
export const RUNTIME_PLATFORMS = ['linux-x64', 'linux-arm64'] as const;
export type RuntimePlatform = (typeof RUNTIME_PLATFORMS)[number];

/** Where erg stages its agent runtime on a cluster: the cluster's runtimeDir, else `<workDir>/.erg/runtime`. */
export function runtimeDirOf(cluster: { workDir: string; runtimeDir: string | null }): string {
  return cluster.runtimeDir ?? `${cluster.workDir}/.erg/runtime`;
}

/** A stored setting as the enum (an unknown value, written by hand, reads as auto). */
export function agentRuntimeSettingOf(stored: string): AgentRuntimeSetting {
  return (AGENT_RUNTIME_SETTINGS as readonly string[]).includes(stored) ? (stored as AgentRuntimeSetting) : 'auto';
}

/** Which runtime the cluster's agents start with, and why: chosen by the scheduler from the probe (apps/scheduler/src/agent-runtime.ts). */
export const AgentRuntimeChoice = z
  .object({
    use: z.enum(['command', 'staged']).describe("command: the cluster's agentCommand; staged: the Node.js and koffi erg stages in the cluster's runtime folder"),
    platform: z.enum(RUNTIME_PLATFORMS).nullable().describe('the staged runtime\'s platform (the nodes\' architecture); null with command'),
    node: z.string().nullable().describe("the Node.js version the agents run: the staged one's, or what agentCommand answered (null: it did not answer)"),
    reason: z.string().describe('why, in words, e.g. "agentCommand `node` not found on gh-001 (exit 127)"'),
    problem: z.string().nullable().describe('set when no runtime fits (e.g. an architecture erg ships no runtime for): runs still start with agentCommand'),
    nodeArchs: z.array(z.object({ arch: z.string(), nodes: z.int(), example: z.string() })).describe("the nodes' architectures as Slurm reports them (scontrol show node)"),
  })
  .meta({ id: 'AgentRuntimeChoice' });
export type AgentRuntimeChoice = z.infer<typeof AgentRuntimeChoice>;

/** What erg found out about a cluster by itself, when it first reached it (and again every so often). */
export const ClusterCapabilities = z
  .object({
    probedAt: z.string().describe('when the scheduler last probed the cluster (ISO 8601)'),
    slurmVersion: z.string().nullable().describe('`sinfo --version` on the login node, e.g. "slurm 22.05.8"'),
    maxArraySize: z
      .int()
      .nullable()
      .optional()
      .describe("`scontrol show config`'s MaxArraySize: erg submits runs that share resources as arrays of at most this many tasks (0 or 1: one job per run)"),
    maxJobCount: z.int().nullable().optional().describe("`scontrol show config`'s MaxJobCount: the most jobs the controller holds at once"),
    powerHelper: z
      .object({ version: z.number(), knobs: z.array(z.enum(POWER_KNOBS)).describe('the power knobs the site allows') })
      .nullable()
      .describe('the node helper, when installed at the cluster\'s powerHelper path and answering; null: campaigns with `power` are refused'),
    powerHelperProblem: z.string().nullable().describe('why there is no helper, in the probe\'s words (null when there is one)'),
    agentRuntime: AgentRuntimeChoice.nullable().optional().describe("the agents' runtime and why (absent: probed before erg chose runtimes; null: the probe could not tell)"),
  })
  .meta({ id: 'ClusterCapabilities' });
export type ClusterCapabilities = z.infer<typeof ClusterCapabilities>;

const SshHost = z
  .string()
  .regex(/^[A-Za-z0-9.:-]{1,253}$/, { error: 'a host name or IP address' })
  .refine(isHost, { error: 'a host name (letters, digits and -, in dot-separated labels that neither start nor end with -) or an IP address' });
const SshPort = z.int().min(1).max(65535).default(22);
const SshUser = z.string().regex(/^[a-z_][a-z0-9_.-]{0,31}$/i, { error: 'a POSIX user name' });
const SshPrivateKey = z
  .string()
  .max(16_384)
  .regex(/^-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+-----END [A-Z ]*PRIVATE KEY-----\s*$/, {
    error: 'an unencrypted private key in OpenSSH or PEM format (-----BEGIN … PRIVATE KEY-----)',
  });
const HostKeySha256 = z.string().regex(/^SHA256:[A-Za-z0-9+/]{43}$/, {
  error: 'the host key fingerprint as ssh-keygen -lf prints it, e.g. SHA256:abc… (43 characters after SHA256:)',
});

/**
 * An OpenSSH user certificate: the one line of `erg_key-cert.pub` that a site's CA makes with
 * `ssh-keygen -s CA -I ID -n USER -V +8h erg_key.pub`. Public, but stored and rotated with its key.
 * Whether it parses and certifies the key is the API's check (it needs the SSH code).
 */
export const SshCertificateText = z
  .string()
  .max(16_384)
  .regex(/^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521))-cert-v01@openssh\.com [A-Za-z0-9+/]+={0,2}( [^\r\n]*)?\s*$/, {
    error: 'an OpenSSH user certificate: the one line of erg_key-cert.pub (ssh-ed25519-cert-v01@openssh.com AAAA…), as `ssh-keygen -s CA -I ID -n USER -V +8h erg_key.pub` writes it',
  });

/** One jump host (bastion) in front of a cluster's login node: `ssh -J user@host:port`. */
export const JumpHostCreate = z
  .object({
    host: SshHost,
    port: SshPort,
    user: SshUser,
    privateKey: SshPrivateKey.optional().describe("the jump host's own key; omitted: the cluster's privateKey (and certificate) log in there too"),
    certificate: SshCertificateText.optional().describe("an OpenSSH user certificate of this jump host's privateKey (only with privateKey)"),
    hostKeySha256: HostKeySha256.describe('required: a jump host is always pinned (no trust on first use)'),
  })
  .strict()
  .meta({ id: 'JumpHostCreate' });
export type JumpHostCreate = z.infer<typeof JumpHostCreate>;

/** Most jump hosts in front of one login node. */
export const MAX_JUMP_HOSTS = 4;
const JumpHosts = z
  .array(JumpHostCreate)
  .max(MAX_JUMP_HOSTS)
  .describe('jump hosts (bastions) in front of the login node, in the order erg passes them: the first is the one erg reaches directly (as in ssh -J first,second)');

export const ClusterCreate = z
  .object({
    name: ClusterName,
    host: SshHost,
    port: SshPort,
    user: SshUser,
    privateKey: SshPrivateKey,
    certificate: SshCertificateText.optional().describe('an OpenSSH user certificate of privateKey, for sites that sign short-lived ones; rotate it with PUT /v1/clusters/{name}/credentials'),
    jumpHosts: JumpHosts.default([]),
    hostKeySha256: HostKeySha256.optional().describe('required with hostKeyPolicy pinned; with trust-on-first-use, omit it to let the first connection record it'),
    hostKeyPolicy: HostKeyPolicy.default('pinned'),
    defaultPartition: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/).optional(),
    agentCommand: z
      .string()
      .regex(/^[A-Za-z0-9._/+-]{1,256}$/, { error: 'a command name or absolute path, e.g. node or /opt/node20/bin/node' })
      .default('node')
      .describe('how job scripts start the telemetry agent on compute nodes (Node.js 18+); see agentRuntime'),
    agentRuntime: z
      .enum(AGENT_RUNTIME_SETTINGS)
      .default('auto')
      .describe(
        "auto: erg probes the cluster and uses agentCommand where it is Node.js 18+, else stages its own Node.js and koffi for the nodes' architecture; " +
          'command: always agentCommand; staged: always the staged runtime (docs/operations.md)',
      ),
    runtimeDir: z
      .string()
      .max(800)
      .regex(REMOTE_DIR, { error: 'an absolute path of letters, digits and . _ , : = + @ -, without a trailing /' })
      .refine((p) => !p.split('/').some((s) => s === '.' || s === '..'), { error: 'must not contain "." or ".." segments' })
      .nullable()
      .default(null)
      .describe("where erg stages its runtime, one folder per content hash (shared by clusters that name the same folder); null: <workDir>/.erg/runtime"),
    agentApiUrl: z
      .url({ protocol: /^https?$/, error: 'an http(s) URL of this API as compute nodes reach it' })
      .max(512)
      // It is written into every job script, readable on the cluster: agents authenticate with their run token.
      .refine((u) => !/^[a-z]+:\/\/[^/?#]*@/i.test(u), { error: 'must not contain a user name or password: agents authenticate with their run token' })
      .nullable()
      .default(null)
      .describe('null: agents only spool; the scheduler pulls their spool when the job ends'),
    modelIdleW: z.number().min(0).max(10_000).default(60).describe('power model for nodes without sensors: CPU watts at 0 % load'),
    modelMaxW: z.number().min(0).max(10_000).default(250).describe('… and at 100 % load'),
    maxConcurrentRuns: z
      .int()
      .min(0)
      .max(1_000_000)
      .nullable()
      .default(null)
      .describe('most runs submitting, queued, running or completing at once on this cluster; null: no limit'),
    maxQueuedJobs: z
      .int()
      .min(1)
      .max(1_000_000)
      .nullable()
      .default(null)
      .describe(
        "most runs with a Slurm job in the cluster's queue at once (submitting, queued or running; every array task counts, as it does for Slurm): set it at or under the site's MaxSubmitJobs for erg's user and erg never hits that limit; null: no limit",
      ),
    powerHelper: z
      .string()
      .max(512)
      .regex(/^(\/[A-Za-z0-9._+-]+)+$/, { error: 'an absolute path of the node helper on the cluster, e.g. /usr/local/sbin/erg-power-helper' })
      .refine((p) => !p.split('/').some((s) => s === '.' || s === '..'), { error: 'must not contain "." or ".." segments' })
      .default(DEFAULT_POWER_HELPER)
      .describe('where the site installed erg\'s node helper (deploy/node-helper), which sets the `power` a campaign asks for; erg probes it when it first reaches the cluster'),
    carbon: ClusterCarbon.nullable()
      .default(null)
      .describe("the grid's carbon intensity (a constant; a series goes to PUT /v1/clusters/{name}/carbon-intensity) and the site's PUE; null: no carbon figures unless a series covers the run. Applies to runs whose energy is computed from now on"),
    price: ClusterPrice.nullable()
      .default(null)
      .describe('what runs cost: per node-hour of the workload window, per kWh the site drew, or both, in one currency; null: no cost figures. Applies to runs whose energy is computed from now on'),
    workDir: z
      .string()
      .max(800)
      .regex(REMOTE_DIR, {
        error: 'an absolute path of letters, digits and . _ , : = + @ -, without a trailing /, e.g. /scratch/me/erg (erg creates one folder per run under it)',
      })
      .refine((p) => !p.split('/').some((s) => s === '.' || s === '..'), { error: 'must not contain "." or ".." segments' }),
  })
  .strict()
  .meta({ id: 'ClusterCreate' });
export type ClusterCreate = z.infer<typeof ClusterCreate>;

/** A certificate as the API shows it: what it says and where it stands now. */
export const CertificateView = z
  .object({
    type: z.string().describe('e.g. ssh-ed25519-cert-v01@openssh.com'),
    keyId: z.string(),
    serial: z.string().describe('decimal (a uint64)'),
    principals: z.array(z.string()),
    validAfter: z.string().nullable().describe('ISO 8601; null: from the beginning'),
    validBefore: z.string().nullable().describe('ISO 8601; null: forever'),
    status: z.enum(['valid', 'expiring', 'expired', 'not-yet-valid']).describe('expiring: inside the warning window; expired: erg no longer connects with it, and runs wait'),
    expiresInS: z.number().nullable().describe('seconds until validBefore (negative once expired); null: never expires'),
    publicKeySha256: z.string().describe('the certified key, as ssh-keygen -lf prints it'),
    signingKeySha256: z.string().describe('the CA key that signed it'),
  })
  .meta({ id: 'Certificate' });
export type CertificateView = z.infer<typeof CertificateView>;

export const JumpHostView = z
  .object({
    host: z.string(),
    port: z.number(),
    user: z.string(),
    hostKeySha256: z.string(),
    ownKey: z.boolean().describe("false: it logs in with the cluster's key and certificate"),
    certificate: CertificateView.nullable().describe("its own certificate, or the cluster's when it has no key of its own; null: none"),
  })
  .meta({ id: 'JumpHost' });
export type JumpHostView = z.infer<typeof JumpHostView>;

export const ClusterView = z
  .object({
    id: z.string(),
    name: z.string(),
    host: z.string(),
    port: z.number(),
    user: z.string(),
    hostKeySha256: z.string().nullable().describe('null only while a trust-on-first-use cluster has not been reached yet'),
    hostKeyPolicy: HostKeyPolicy,
    defaultPartition: z.string().nullable(),
    workDir: z.string(),
    agentCommand: z.string(),
    agentRuntime: z.enum(AGENT_RUNTIME_SETTINGS),
    runtimeDir: z.string().describe('where the staged runtime goes (the default resolved)'),
    agentApiUrl: z.string().nullable(),
    modelIdleW: z.number(),
    modelMaxW: z.number(),
    maxConcurrentRuns: z.number().nullable(),
    maxQueuedJobs: z.number().nullable(),
    powerHelper: z.string(),
    carbon: ClusterCarbonView.nullable().describe("the constant grid intensity and the PUE; null: none set"),
    carbonIntensity: CarbonIntensitySeries.describe('the grid intensity series stored for the cluster (PUT /v1/clusters/{name}/carbon-intensity)'),
    price: ClusterPriceView.nullable().describe('null: its runs get no cost figures'),
    capabilities: ClusterCapabilities.nullable().describe('null until the scheduler has reached the cluster'),
    nodeReport: ClusterNodeReport.nullable().describe("the latest first-contact report of one of the cluster's nodes (`erg-agent doctor --json`, stored with PUT /v1/clusters/{name}/node-report); null: none"),
    lastError: z
      .string()
      .nullable()
      .describe(
        "the last failure seen by the scheduler (null once it reaches the cluster again): its detail for the project's maintainers and admins, " +
          'for viewers and researchers only "the cluster cannot be reached; a maintainer can see why"',
      ),
    lastContactAt: z.string().nullable(),
    certificate: CertificateView.nullable().describe("the cluster's OpenSSH user certificate; null: it logs in with the plain key"),
    jumpHosts: z.array(JumpHostView).describe('the jump hosts in front of the login node, first hop first (their keys are never shown)'),
    credentialsVersion: z.int().describe('bumped by every change of the key, certificate or jump hosts; the scheduler reconnects with the new ones without dropping work in flight'),
    credentialsUpdatedAt: z.string().nullable().describe('when the credentials last changed after registration; null: never'),
    warnings: z
      .array(z.string())
      .describe('what needs attention before it stops the cluster: a certificate in its warning window (ERG_CERTIFICATE_WARNING_S, ERG_CERTIFICATE_WARNING_SHARE) or expired'),
    createdAt: z.string(),
    deactivatedAt: z
      .string()
      .nullable()
      .describe('set while the cluster is deactivated: no campaign may name it, its pending runs are held (not submitted) and its jobs in Slurm are followed to their end'),
  })
  .meta({ id: 'Cluster' });
export type ClusterView = z.infer<typeof ClusterView>;

/**
 * PUT /v1/clusters/{name}/credentials: rotates what erg logs in with, without downtime. Only the
 * fields given change; at least one is needed.
 */
export const ClusterCredentials = z
  .object({
    privateKey: SshPrivateKey.optional().describe("the new key; omitted: keep the stored one"),
    certificate: SshCertificateText.nullable()
      .optional()
      .describe('the new certificate; null: log in with the plain key from now on; omitted: keep the stored one (it must certify the key, new or kept)'),
    jumpHosts: JumpHosts.optional().describe('replaces the whole chain ([]: none); omitted: keep it'),
  })
  .strict()
  .meta({ id: 'ClusterCredentials' });
export type ClusterCredentials = z.infer<typeof ClusterCredentials>;

/** A campaign's state, derived from its runs' (and whether a cancel was asked for). */
export const CampaignState = z.enum(['pending', 'running', 'cancelling', 'completed', 'failed', 'cancelled']);
export type CampaignState = z.infer<typeof CampaignState>;

/** Campaign states that no longer change. */
export const TERMINAL_CAMPAIGN_STATES = ['completed', 'failed', 'cancelled'] as const satisfies readonly CampaignState[];

export const RunSummary = z
  .object({
    id: z.string(),
    configurationKey: z.string(),
    parameters: z.record(z.string(), z.unknown()),
    repetition: z.number(),
    state: RunState,
    slurmJobId: z.string().nullable(),
    exitCode: z.number().nullable(),
    reason: z.string().nullable(),
  })
  .meta({ id: 'RunSummary' });

/** Who started a campaign, each part on its own: the user, the token they used, the suite. */
export const CampaignCreator = z
  .object({
    user: z.object({ id: z.string(), name: z.string() }).nullable().describe('the user whose token created it; null for a suite\'s campaigns and for campaigns from before users were recorded'),
    token: z
      .object({ id: z.string().nullable().describe('null: a campaign from before tokens were recorded by id, whose token could not be told from its name'), name: z.string() })
      .nullable()
      .describe('the API token it was created with (its name is free text: the user is who created it); null for a suite\'s campaigns'),
    suite: z.string().nullable().describe('the suite that started it (on its schedule or when triggered); null: started through the API'),
  })
  .meta({ id: 'CampaignCreator' });
export type CampaignCreator = z.infer<typeof CampaignCreator>;

export const CampaignView = z
  .object({
    id: z.string(),
    name: z.string(),
    cluster: z.string().nullable(),
    owner: z
      .string()
      .nullable()
      .describe(
        "who started it: the user's name, or `suite:<name>` when a suite did (user names cannot contain `:`); null when that is not known (campaigns from before users were recorded)",
      ),
    createdBy: CampaignCreator,
    state: CampaignState,
    runCounts: z.record(z.string(), z.number()).describe('number of runs in each state'),
    totalRuns: z.number(),
    createdAt: z.string(),
    cancelRequestedAt: z.string().nullable(),
    design: CampaignRunOrder.describe("the order its runs go to the cluster in and the order's seed (docs/experiments.md, \"Run order\")"),
  })
  .meta({ id: 'Campaign' });

export const CampaignCreated = CampaignView.extend({
  configurations: z.array(z.object({ key: z.string(), parameters: z.record(z.string(), z.unknown()) })),
  runs: z.array(z.object({ id: z.string(), configurationKey: z.string(), repetition: z.number() })),
}).meta({ id: 'CampaignCreated' });

export const CampaignDetail = CampaignView.extend({ spec: z.unknown() }).meta({ id: 'CampaignDetail' });

/** The answer to POST /v1/campaigns/{id}/cancel: the campaign, and what this request is cancelling. */
export const CampaignCancelled = CampaignView.extend({
  cancelling: z
    .object({
      pending: z.int().min(0).describe('runs not yet handed to Slurm: erg cancels them itself (before the answer, or right after it for large campaigns)'),
      active: z.int().min(0).describe('runs submitting, queued, running or completing: the scheduler cancels their Slurm jobs (scancel) on its next cycle'),
    })
    .describe('how many runs are being cancelled; zero and zero when nothing was left to cancel'),
}).meta({ id: 'CampaignCancelled' });
export type CampaignCancelled = z.infer<typeof CampaignCancelled>;

/** The answer to POST /v1/runs/{id}/cancel. */
export const RunCancelled = z
  .object({
    id: z.string(),
    outcome: z
      .enum(['cancelled', 'cancelling', 'ended'])
      .describe('cancelled: it was pending and ended at once; cancelling: the scheduler cancels its Slurm job (an array task alone) on its next cycle; ended: it had already ended, nothing to do'),
  })
  .meta({ id: 'RunCancelled' });
export type RunCancelled = z.infer<typeof RunCancelled>;

/** One figure of merit as an importer reports it: a finite number within ±MAX_METRIC_MAGNITUDE, or null (not measured). */
export const MetricValue = z
  .number({ error: 'a finite number, or null' })
  .min(-MAX_METRIC_MAGNITUDE, { error: `at least -${MAX_METRIC_MAGNITUDE}` })
  .max(MAX_METRIC_MAGNITUDE, { error: `at most ${MAX_METRIC_MAGNITUDE} (no figure of merit is larger)` })
  .nullable();

/**
 * POST /v1/runs/{id}/finish: the window an imported run's measurement covered, bounded by
 * windowIssue (bounds.ts) against the server's clock when the request is validated.
 */
export const RunFinish = z
  .object({
    startedAt: z.iso.datetime({ offset: true, error: 'an ISO 8601 time, e.g. 2026-11-30T10:00:00Z' }),
    endedAt: z.iso.datetime({ offset: true, error: 'an ISO 8601 time, e.g. 2026-11-30T10:05:00Z' }),
    exitCode: z.int().min(0).max(255).optional(),
    metrics: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/), MetricValue).optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    const issue = windowIssue(Date.parse(b.startedAt), Date.parse(b.endedAt), Date.now());
    if (issue) ctx.addIssue({ code: 'custom', path: [issue.field], message: issue.message });
  })
  .describe(
    `Both times between ${new Date(EARLIEST_MEASUREMENT_MS).toISOString().slice(0, 10)} and the server's now + ${CLOCK_SKEW_MS / 60_000} minutes, ` +
      `endedAt after startedAt, at most ${MAX_WINDOW_MS / 86_400_000} days apart.`,
  );
export type RunFinish = z.infer<typeof RunFinish>;

export const RunView = z
  .object({
    id: z.string(),
    campaignId: z.string(),
    campaignName: z.string(),
    state: RunState,
    reason: z.string().nullable().describe('why the run is waiting or how it ended: Slurm pending reason, SSH failure, sbatch error'),
    slurmJobId: z.string().nullable().describe('the Slurm job of the run: its id, or `<array job id>_<task id>` for a task of an array job (what `scancel` and `sacct -j` take)'),
    arrayJobId: z.string().nullable().describe('the array job the run is a task of (runs of a campaign that ask for the same resources share arrays); null for a job of its own'),
    arrayTaskId: z.int().nullable().describe('the run\'s task in that array (SLURM_ARRAY_TASK_ID); null for a job of its own'),
    cancelRequestedAt: z.string().nullable().describe('when this run alone was cancelled (POST /v1/runs/{id}/cancel); null otherwise'),
    slurmState: z.string().nullable(),
    configurationKey: z.string(),
    parameters: z.record(z.string(), z.unknown()),
    repetition: z.number(),
    exitCode: z.number().nullable(),
    signal: z.number().nullable(),
    submitAttempts: z.number(),
    submittedAt: z.string().nullable(),
    startedAt: z.string().nullable(),
    endedAt: z.string().nullable(),
    timeS: z.number().nullable().describe('time-to-solution: the workload window measured by the job script'),
    workloadStart: z.string().nullable().describe('start of the workload window measured by the job script (ISO 8601, ms)'),
    workloadEnd: z.string().nullable(),
    idleStart: z.string().nullable().describe('the idle baseline measured before the workload, if the spec asked for one'),
    idleEnd: z.string().nullable(),
    cooldown: RunCooldown.nullable().describe("the wait before the idle baseline and the workload until the run's nodes were back near idle (the spec's cooldown); null: the campaign has none, or the job never reached it"),
    partition: z.string().nullable().describe("the spec's resources.partition, else the cluster's default partition; null: Slurm's default"),
    nodeList: z.string().nullable(),
    runDir: z.string().nullable(),
    metrics: z.record(z.string(), z.number().nullable()).nullable(),
    warnings: z
      .array(z.string())
      .describe('what erg could not do in full for the run without failing it, e.g. metrics read from only the end of a huge stdout.log, or a metric regex stopped at its time budget'),
    jobScript: z.string().nullable().describe('the exact rendered sbatch script'),
    nodes: z
      .array(
        z.object({
          node: z.string(),
          fingerprintId: z.string().nullable().describe('the stored fingerprint (one per distinct content, shared by runs)'),
          fingerprint: NodeFingerprintSchema.nullable().describe('what exactly was measured on this node, as its agent saw it at start'),
          power: PowerRecordSchema.nullable().describe("the node helper's record of the power state it set; null when the campaign set none"),
        }),
      )
      .describe('the nodes whose agents reported, with their provenance'),
  })
  .meta({ id: 'Run' });

/** GET /v1/campaigns/{id}/export: a campaign's evidence bundle, a tar archive (docs/experiments.md, "Evidence bundle"). */
export const EvidenceBundleBody = z
  .string()
  .describe(
    'a tar archive (application/x-tar): manifest.json (every file\'s sha256), the spec as submitted and as stored, the campaign, results.json, ' +
      'samples.parquet, and per run runs/<run>/run.json, inputs.json, energy.json, marks.csv.gz and samples/<node>.csv.gz; `erg verify` checks it offline',
  )
  .meta({ id: 'EvidenceBundle', format: 'binary' });

export const RunLogs = z
  .object({
    runId: z.string(),
    source: z.enum(['cluster', 'stored']).describe('read live from the run directory, or the tail stored when the run finished'),
    stdout: z.string(),
    stderr: z.string(),
    truncated: z.boolean(),
  })
  .meta({ id: 'RunLogs' });

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      issues: z.array(z.object({ path: z.string(), message: z.string(), code: z.string() })).optional(),
    }),
  })
  .meta({ id: 'Error' });

/** Where a new cluster, suite or import campaign goes; default: your only project with the role it needs. */
export const ProjectQuery = z.object({
  project: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, { error: 'a project name' }).optional().describe('the project (default: your only one with the role needed)'),
});

export const IdParams = z.object({ id: z.uuid({ error: 'not an id (expected a UUID)' }) });
export const NameParams = z.object({ name: ClusterName });

/** GET /v1/clusters. */
export const ClusterList = z.object({ items: z.array(ClusterView) }).meta({ id: 'ClusterList' });

/** GET /v1/campaigns: one page, newest first. */
export const CampaignPage = z
  .object({ items: z.array(CampaignView), next: z.string().nullable().describe('cursor of the next page; null on the last') })
  .meta({ id: 'CampaignPage' });

/** GET /v1/campaigns/:id/runs: one page of a campaign's runs and how many match in all. */
export const RunSummaryPage = z.object({ items: z.array(RunSummary), total: z.number() }).meta({ id: 'RunSummaryPage' });

/** GET /healthz: the process answers. */
export const Liveness = z.object({ ok: z.literal(true) }).meta({ id: 'Liveness' });

/** GET /readyz: whether Postgres and Redis answer ('ok', else what went wrong); 503 when either does not. */
export const Readiness = z.object({ ok: z.boolean(), postgres: z.string(), redis: z.string() }).meta({ id: 'Readiness' });
