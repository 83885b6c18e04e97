// erg clusters list | show NAME | add …
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, Option } from 'commander';
import { z } from 'zod';
import type { Cluster, ClusterCreate } from '@erg/client';
import type { CommandContext } from '../context';
import { CliError, EXIT, usageError, withFlagNames, type ExitCode } from '../errors';
import { renderFields, renderTable } from '../output/table';
import { NO_VALUE } from '@erg/format';
import { jsonOption, withExamples, type Act } from '../program';
import { parsePort } from './args';

/**
 * The local cluster's description, `.erg/local-slurm/cluster.json` (written by
 * deploy/local-slurm/up.sh). Every field is optional here because flags may supply or override it;
 * other fields of the file are ignored.
 */
export const ClusterFile = z.object({
  name: z.string().optional(),
  host: z.string().optional(),
  port: z.number().int().optional(),
  user: z.string().optional(),
  privateKeyPath: z.string().optional(),
  hostKeySha256: z.string().optional(),
  partition: z.string().optional(),
  workDir: z.string().optional(),
});
export type ClusterFile = z.infer<typeof ClusterFile>;

interface AddFlags {
  from?: string;
  name?: string;
  host?: string;
  port?: number;
  user?: string;
  keyFile?: string;
  hostKey?: string;
  workDir?: string;
  partition?: string;
  agentApiUrl?: string;
  agentCommand?: string;
  trustOnFirstUse?: boolean;
  project?: string;
  update?: boolean;
  json?: boolean;
}

/** Which flag sets each body field, to name the flag when the API refuses a field. */
const FLAG_OF: Record<string, string> = {
  name: '--name', host: '--host', port: '--port', user: '--user', privateKey: '--key-file', hostKeySha256: '--host-key',
  workDir: '--work-dir', defaultPartition: '--partition', agentApiUrl: '--agent-api-url', agentCommand: '--agent-command',
};

function readClusterFile(file: string): ClusterFile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw usageError(`--from ${file}: ${(err as Error).message}`, 'give the cluster description file, e.g. .erg/local-slurm/cluster.json');
  }
  const parsed = ClusterFile.safeParse(raw);
  if (!parsed.success) {
    throw usageError(`--from ${file} is not a cluster description: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}

/**
 * The POST /v1/clusters body from `--from FILE` and the flags (flags win). The private key is read
 * from the key file here, so it never appears on a command line.
 */
export function clusterBody(flags: AddFlags, baseDir: string): ClusterCreate {
  const file: ClusterFile = flags.from ? readClusterFile(path.resolve(baseDir, flags.from)) : {};
  const required = {
    name: flags.name ?? file.name,
    host: flags.host ?? file.host,
    user: flags.user ?? file.user,
    privateKey: flags.keyFile ?? file.privateKeyPath, // the key file's path, read below
    hostKeySha256: flags.hostKey ?? file.hostKeySha256,
    workDir: flags.workDir ?? file.workDir,
  };
  // Trust on first use: the fingerprint may be left out; the first connection pins the key it sees.
  const tofu = flags.trustOnFirstUse === true;
  const missing = Object.entries(required)
    .filter(([field, value]) => value === undefined && !(tofu && field === 'hostKeySha256'))
    .map(([field]) => FLAG_OF[field]);
  if (missing.length > 0) {
    throw usageError(`missing ${missing.join(', ')}`, 'give them as flags, or --from .erg/local-slurm/cluster.json (flags override its fields)');
  }
  const keyFile = required.privateKey!;
  let privateKey: string;
  try {
    privateKey = readFileSync(path.resolve(baseDir, keyFile), 'utf8');
  } catch (err) {
    throw usageError(`cannot read the private key file ${keyFile}: ${(err as Error).message}`);
  }
  const partition = flags.partition ?? file.partition;
  const agentApiUrl = flags.agentApiUrl === 'none' ? null : flags.agentApiUrl;
  return {
    name: required.name!,
    host: required.host!,
    port: flags.port ?? file.port ?? 22,
    user: required.user!,
    privateKey,
    ...(required.hostKeySha256 === undefined ? {} : { hostKeySha256: required.hostKeySha256 }),
    ...(tofu ? { hostKeyPolicy: 'trust-on-first-use' as const } : {}),
    workDir: required.workDir!,
    ...(partition === undefined ? {} : { defaultPartition: partition }),
    ...(agentApiUrl === undefined ? {} : { agentApiUrl }),
    ...(flags.agentCommand === undefined ? {} : { agentCommand: flags.agentCommand }),
  };
}

/** The Slurm version the scheduler's probe found: `slurm 22.05.8`, or that it has not probed the cluster yet. */
export function slurmVersionText(c: Pick<Cluster, 'capabilities'>): string {
  if (!c.capabilities) return 'not probed yet';
  return c.capabilities.slurmVersion ?? 'unknown (sinfo --version said nothing the probe could read)';
}

/**
 * The node helper as the probe found it: the knobs it allows (what a campaign's `power` may set),
 * or why there is none (campaigns with `power` are then refused); `not probed yet` before the scheduler reached the cluster.
 */
export function powerHelperText(c: Pick<Cluster, 'capabilities'>, brief = false): string {
  const caps = c.capabilities;
  if (!caps) return 'not probed yet';
  // The list keeps one short cell; `erg clusters show` gives the probe's reason.
  if (caps.powerHelper === null) return brief ? 'none' : `none: ${caps.powerHelperProblem ?? 'no node helper answered'}`;
  const { version, knobs } = caps.powerHelper;
  return `version ${version}, ${knobs.length === 0 ? 'allows no knob' : `knobs ${knobs.join(', ')}`}`;
}

function clusterFields(c: Cluster): [string, string][] {
  return [
    ['Name', c.name],
    ['SSH', `${c.user}@${c.host}:${c.port}`],
    ['Host key', c.hostKeySha256 ?? `not seen yet (${c.hostKeyPolicy}: pinned at the first connection)`],
    ['Partition', c.defaultPartition ?? '(Slurm default)'],
    ['Work dir', c.workDir],
    ['Agent', `${c.agentCommand}; pushes to ${c.agentApiUrl ?? '(nothing: spool only, pulled at job end)'}`],
    ['Power model', `${c.modelIdleW} W idle, ${c.modelMaxW} W at full load (for nodes without sensors)`],
    ['Slurm', slurmVersionText(c)],
    ['Power helper', `${c.powerHelper}: ${powerHelperText(c)}`],
    ['Probed', c.capabilities?.probedAt ?? 'not yet (the scheduler probes a cluster when it first reaches it)'],
    ['Last contact', c.lastContactAt ?? 'never'],
    ['Last error', c.lastError ?? 'none'],
    ['Created', c.createdAt],
  ];
}

async function list(ctx: CommandContext, opts: { json?: boolean }): Promise<void> {
  const body = await ctx.connect().call((c) => c.GET('/v1/clusters'));
  if (opts.json) return void ctx.stdout.write(JSON.stringify(body, null, 2) + '\n');
  if (body.items.length === 0) {
    ctx.stdout.write('No clusters registered.\n');
    ctx.stderr.write('hint: register one with `erg clusters add --from .erg/local-slurm/cluster.json` (or --name, --host, … see erg clusters add --help)\n');
    return;
  }
  const rows = body.items.map((c) => [
    c.name, `${c.user}@${c.host}:${c.port}`, c.defaultPartition ?? NO_VALUE, c.workDir, slurmVersionText(c), powerHelperText(c, true), c.lastContactAt ?? 'never',
    c.lastError ? ctx.color.red(`error: ${c.lastError}`) : ctx.color.green('ok'),
  ]);
  const columns = ['NAME', 'SSH', 'PARTITION', 'WORK DIR', 'SLURM', 'POWER HELPER', 'LAST CONTACT', 'STATUS'].map((header) => ({ header }));
  ctx.stdout.write(renderTable(columns, rows, { header: ctx.color.bold }));
}

async function show(ctx: CommandContext, name: string, opts: { json?: boolean }): Promise<void> {
  const cluster = await ctx.connect().call((c) => c.GET('/v1/clusters/{name}', { params: { path: { name } } }));
  ctx.stdout.write(opts.json ? JSON.stringify(cluster, null, 2) + '\n' : renderFields(clusterFields(cluster)));
}

async function add(ctx: CommandContext, flags: AddFlags): Promise<ExitCode> {
  const body = clusterBody(flags, ctx.runtime.cwd);
  const project = flags.project === undefined ? {} : { project: flags.project };
  const api = ctx.connect();
  let cluster: Cluster;
  try {
    if (flags.update) {
      const { name, ...rest } = body;
      cluster = await api.call((c) => c.PUT('/v1/clusters/{name}', { params: { path: { name }, query: project }, body: rest }));
    } else {
      cluster = await api.call((c) => c.POST('/v1/clusters', { params: { query: project }, body }));
    }
  } catch (err) {
    if (err instanceof CliError && err.api?.status === 409) {
      throw new CliError(`a cluster named "${body.name}" already exists`, EXIT.BAD, {
        hint: `to replace its settings, run the same command with --update; \`erg clusters show ${body.name}\` shows the current ones`,
      });
    }
    throw err instanceof CliError ? withFlagNames(err, FLAG_OF) : err;
  }
  if (flags.json) {
    ctx.stdout.write(JSON.stringify(cluster, null, 2) + '\n');
  } else {
    ctx.stdout.write(`Cluster ${cluster.name} ${flags.update ? 'saved' : 'registered'}: ${cluster.user}@${cluster.host}:${cluster.port}, work dir ${cluster.workDir}\n`);
    ctx.stderr.write(`hint: submit a campaign with \`cluster: ${cluster.name}\`; the scheduler connects on its next cycle (\`erg clusters show ${cluster.name}\` shows its last contact)\n`);
  }
  return EXIT.OK;
}

export function registerClusters(program: Command, act: Act): void {
  const clusters = program.command('clusters')
      .description('register and inspect Slurm clusters');
  withExamples(clusters, 'erg clusters list', 'erg clusters add --from .erg/local-slurm/cluster.json');

  withExamples(
    clusters.command('list')
      .description('list the registered clusters').addOption(jsonOption()),
    'erg clusters list',
    'erg clusters list --json | jq -r ".items[].name"',
  ).action(act((ctx, cmd) => list(ctx, cmd.opts())));

  withExamples(
    clusters.command('show')
      .description('show one cluster').argument('<name>', 'cluster name').addOption(jsonOption()),
    'erg clusters show local',
  ).action(act((ctx, cmd) => show(ctx, cmd.processedArgs[0] as string, cmd.opts())));

  withExamples(
    clusters
      .command('add')
      .summary('register a cluster')
      .description('register a cluster (POST /v1/clusters); with --update, create or replace it (PUT /v1/clusters/NAME)')
      .option('--from <file>', 'a cluster description (JSON: name, host, port, user, privateKeyPath, hostKeySha256, partition, workDir), e.g. .erg/local-slurm/cluster.json; flags override its fields')
      .option('--name <name>', 'the name campaign specs use (lower-case letters, digits, -)')
      .option('--host <host>', 'login node host name or address')
      .option('--port <port>', 'SSH port (default 22)', parsePort)
      .option('--user <user>', 'SSH user')
      .option('--key-file <path>', 'unencrypted private key file for SSH (its content is sent to the API, which never returns it)')
      .option('--host-key <fingerprint>', "pinned host key, SHA256:… as 'ssh-keygen -lf' prints it")
      .option('--trust-on-first-use', 'no --host-key: pin whatever key the first connection sees (only where you cannot get the fingerprint)')
      .option('--project <name>', 'the project the cluster belongs to (default: your only one where you are a maintainer)')
      .option('--work-dir <dir>', 'absolute directory on the cluster for run directories')
      .option('--partition <name>', 'default partition for specs that name none')
      .option('--agent-api-url <url>', 'the API URL as compute nodes reach it, for live telemetry ("none": agents only spool)')
      .option('--agent-command <command>', 'how job scripts start the telemetry agent (default node)')
      .addOption(new Option('--update', 'replace the settings of an existing cluster of that name (PUT)'))
      .addOption(jsonOption("print the API's JSON of the cluster")),
    'erg clusters add --from .erg/local-slurm/cluster.json',
    'erg clusters add --name gh --host login.example.org --user alice --key-file ~/.ssh/erg_ed25519 \\\n      --host-key SHA256:abc… --work-dir /scratch/alice/erg --partition gh200',
    'erg clusters add --from .erg/local-slurm/cluster.json --agent-api-url http://127.0.0.1:8080 --update',
  ).action(act((ctx, cmd) => add(ctx, cmd.opts<AddFlags>())));
}
