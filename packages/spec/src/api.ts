import { z } from 'zod';
import { RunState } from './run-state';

/**
 * Request and response bodies of the REST API. These schemas validate requests, shape the
 * OpenAPI document served at /openapi.json, and (through openapi-typescript) type the client.
 */

/** Where erg may put run directories: the same rule the job renderer enforces on them. */
export const REMOTE_DIR = /^(\/[A-Za-z0-9._,:=+@-]+)+$/;

export const ClusterName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, {
  error: 'use 1-63 lower-case letters, digits and -, starting with a letter or digit',
});

export const ClusterCreate = z
  .object({
    name: ClusterName,
    host: z.string().regex(/^[A-Za-z0-9.:-]{1,253}$/, { error: 'a host name or IP address' }),
    port: z.int().min(1).max(65535).default(22),
    user: z.string().regex(/^[a-z_][a-z0-9_.-]{0,31}$/i, { error: 'a POSIX user name' }),
    privateKey: z
      .string()
      .max(16_384)
      .regex(/^-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+-----END [A-Z ]*PRIVATE KEY-----\s*$/, {
        error: 'an unencrypted private key in OpenSSH or PEM format (-----BEGIN … PRIVATE KEY-----)',
      }),
    hostKeySha256: z.string().regex(/^SHA256:[A-Za-z0-9+/]{43}$/, {
      error: 'the host key fingerprint as ssh-keygen -lf prints it, e.g. SHA256:abc… (43 characters after SHA256:)',
    }),
    defaultPartition: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/).optional(),
    agentCommand: z
      .string()
      .regex(/^[A-Za-z0-9._/+-]{1,256}$/, { error: 'a command name or absolute path, e.g. node or /opt/node20/bin/node' })
      .default('node')
      .describe('how job scripts start the telemetry agent on compute nodes (Node.js 18+)'),
    agentApiUrl: z
      .url({ protocol: /^https?$/, error: 'an http(s) URL of this API as compute nodes reach it' })
      .max(512)
      .nullable()
      .default(null)
      .describe('null: agents only spool; the scheduler pulls their spool when the job ends'),
    modelIdleW: z.number().min(0).max(10_000).default(60).describe('power model for nodes without sensors: CPU watts at 0 % load'),
    modelMaxW: z.number().min(0).max(10_000).default(250).describe('… and at 100 % load'),
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

export const ClusterView = z
  .object({
    id: z.string(),
    name: z.string(),
    host: z.string(),
    port: z.number(),
    user: z.string(),
    hostKeySha256: z.string(),
    defaultPartition: z.string().nullable(),
    workDir: z.string(),
    agentCommand: z.string(),
    agentApiUrl: z.string().nullable(),
    modelIdleW: z.number(),
    modelMaxW: z.number(),
    lastError: z.string().nullable().describe('the last SSH failure seen by the scheduler; null once it reaches the cluster again'),
    lastContactAt: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ id: 'Cluster' });
export type ClusterView = z.infer<typeof ClusterView>;

export const CampaignState = z.enum(['pending', 'running', 'cancelling', 'completed', 'failed', 'cancelled']);

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

export const CampaignView = z
  .object({
    id: z.string(),
    name: z.string(),
    cluster: z.string().nullable(),
    state: CampaignState,
    runCounts: z.record(z.string(), z.number()).describe('number of runs in each state'),
    totalRuns: z.number(),
    createdAt: z.string(),
    cancelRequestedAt: z.string().nullable(),
  })
  .meta({ id: 'Campaign' });

export const CampaignCreated = CampaignView.extend({
  configurations: z.array(z.object({ key: z.string(), parameters: z.record(z.string(), z.unknown()) })),
  runs: z.array(z.object({ id: z.string(), configurationKey: z.string(), repetition: z.number() })),
}).meta({ id: 'CampaignCreated' });

export const CampaignDetail = CampaignView.extend({ spec: z.unknown() }).meta({ id: 'CampaignDetail' });

export const RunView = z
  .object({
    id: z.string(),
    campaignId: z.string(),
    state: RunState,
    reason: z.string().nullable().describe('why the run is waiting or how it ended: Slurm pending reason, SSH failure, sbatch error'),
    slurmJobId: z.string().nullable(),
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
    nodeList: z.string().nullable(),
    runDir: z.string().nullable(),
    metrics: z.record(z.string(), z.number().nullable()).nullable(),
    jobScript: z.string().nullable().describe('the exact rendered sbatch script'),
  })
  .meta({ id: 'Run' });

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

export const IdParams = z.object({ id: z.uuid({ error: 'not an id (expected a UUID)' }) });
export const NameParams = z.object({ name: ClusterName });
