// erg clusters list | show NAME | add … | credentials NAME … | node-report NAME FILE | policy [--allow HOST] [--disallow HOST]
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command, Option } from 'commander';
import { z } from 'zod';
import type { Cluster, ClusterCreate, ClusterCredentials, JumpHostCreate } from '@erg/client';
import type { CommandContext } from '../context';
import { CliError, EXIT, usageError, withFlagNames, type ExitCode } from '../errors';
import { renderFields, renderTable } from '../output/table';
import { NO_VALUE } from '@erg/format';
import { jsonOption, withExamples, type Act } from './register';
import { parseCap, parsePort } from './args';
import { registerDeactivation } from './deactivation';

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
  agentRuntime?: string;
  runtimeDir?: string;
  trustOnFirstUse?: boolean;
  project?: string;
  update?: boolean;
  json?: boolean;
  cert?: string;
  jump?: string[];
  maxQueuedJobs?: number | 'none';
  maxConcurrentRuns?: number | 'none';
}

interface CredentialsFlags {
  key?: string;
  /** A file, or false for --no-cert. */
  cert?: string | false;
  /** Jump host specs; false for --no-jump. */
  jump?: string[] | false;
  json?: boolean;
}

/** Which flag sets each body field, to name the flag when the API refuses a field. */
const FLAG_OF: Record<string, string> = {
  name: '--name', host: '--host', port: '--port', user: '--user', privateKey: '--key-file', hostKeySha256: '--host-key',
  workDir: '--work-dir', defaultPartition: '--partition', agentApiUrl: '--agent-api-url', agentCommand: '--agent-command',
  agentRuntime: '--agent-runtime', runtimeDir: '--runtime-dir', certificate: '--cert', jumpHosts: '--jump', maxQueuedJobs: '--max-queued-jobs', maxConcurrentRuns: '--max-concurrent-runs',
};

/** The same for `erg clusters credentials`; issues of a jump host (`jumpHosts[1].privateKey: …`) name its --jump. */
const CREDENTIAL_FLAG_OF: Record<string, string> = { privateKey: '--key', certificate: '--cert', jumpHosts: '--jump' };
const JUMP_FLAG_OF: Record<string, string> = Object.fromEntries(
  Array.from({ length: 8 }, (_, i) => ['', '.host', '.port', '.user', '.privateKey', '.certificate', '.hostKeySha256'].map((f) => [`jumpHosts[${i}]${f}`, `--jump #${i + 1}`])).flat(),
);
const flagNames = (err: CliError, flagOf: Record<string, string>) => withFlagNames(err, { ...flagOf, ...JUMP_FLAG_OF });

function readText(file: string, flag: string, baseDir: string): string {
  try {
    // `key=~/.ssh/k` inside a quoted --jump is not expanded by the shell.
    return readFileSync(path.resolve(baseDir, file.replace(/^~(?=\/)/, os.homedir())), 'utf8');
  } catch (err) {
    throw usageError(`${flag} ${file}: cannot read it: ${(err as Error).message}`);
  }
}

/** What `--jump` takes: USER@HOST[:PORT],host-key=SHA256:…[,key=FILE[,cert=FILE]]. */
export const JUMP_SPEC = 'USER@HOST[:PORT],host-key=SHA256:…[,key=FILE][,cert=FILE]';

/**
 * One `--jump` value as a jump host of the API body; key and certificate are read from their
 * files here, so they never appear on a command line. Without key=, the jump host logs in with
 * the cluster's key (and certificate).
 */
export function parseJumpSpec(spec: string, baseDir: string): JumpHostCreate {
  const [target, ...attrs] = spec.split(',');
  const m = /^([^@\s]+)@(\[[0-9A-Fa-f:]+\]|[^:@\s]+)(?::(\d+))?$/.exec(target ?? '');
  if (!m) throw usageError(`--jump ${spec}: expected ${JUMP_SPEC}`, "e.g. --jump 'erg@bastion.example.org:22,host-key=SHA256:abc…'");
  const fields: Record<string, string> = {};
  for (const attr of attrs) {
    const eq = attr.indexOf('=');
    const name = eq < 0 ? attr : attr.slice(0, eq);
    if (!['host-key', 'key', 'cert'].includes(name) || eq < 0) throw usageError(`--jump ${spec}: unknown part "${attr}"; expected ${JUMP_SPEC}`);
    fields[name] = attr.slice(eq + 1);
  }
  if (!fields['host-key']) {
    throw usageError(`--jump ${spec}: host-key= is required (jump hosts are always pinned)`, `get it with: ssh-keyscan -p ${m[3] ?? 22} ${m[2]} | ssh-keygen -lf -`);
  }
  if (fields.cert && !fields.key) throw usageError(`--jump ${spec}: cert= needs key= (a jump host's certificate is for its own key; without both it uses the cluster's)`);
  const port = m[3] === undefined ? 22 : Number(m[3]);
  if (port < 1 || port > 65535) throw usageError(`--jump ${spec}: port ${m[3]} is not a port number from 1 to 65535`);
  return {
    host: m[2]!.replace(/^\[|\]$/g, ''),
    port,
    user: m[1]!,
    hostKeySha256: fields['host-key'],
    ...(fields.key ? { privateKey: readText(fields.key, '--jump key=', baseDir) } : {}),
    ...(fields.cert ? { certificate: readText(fields.cert, '--jump cert=', baseDir).trim() } : {}),
  };
}

const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

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
  const jumpHosts = (flags.jump ?? []).map((spec) => parseJumpSpec(spec, baseDir));
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
    // Checked by the API (its 400 names the flag through FLAG_OF).
    ...(flags.agentRuntime === undefined ? {} : { agentRuntime: flags.agentRuntime as ClusterCreate['agentRuntime'] }),
    ...(flags.runtimeDir === undefined ? {} : { runtimeDir: flags.runtimeDir }),
    ...(flags.cert === undefined ? {} : { certificate: readText(flags.cert, '--cert', baseDir).trim() }),
    ...(jumpHosts.length === 0 ? {} : { jumpHosts }),
    ...(flags.maxQueuedJobs === undefined ? {} : { maxQueuedJobs: flags.maxQueuedJobs === 'none' ? null : flags.maxQueuedJobs }),
    ...(flags.maxConcurrentRuns === undefined ? {} : { maxConcurrentRuns: flags.maxConcurrentRuns === 'none' ? null : flags.maxConcurrentRuns }),
  };
}

/** The PUT /v1/clusters/NAME/credentials body from the flags (files read here); a usage error when there is nothing to change. */
export function credentialsBody(flags: CredentialsFlags, baseDir: string): ClusterCredentials {
  const body: ClusterCredentials = {
    ...(flags.key === undefined ? {} : { privateKey: readText(flags.key, '--key', baseDir) }),
    ...(flags.cert === undefined ? {} : { certificate: flags.cert === false ? null : readText(flags.cert, '--cert', baseDir).trim() }),
    ...(flags.jump === undefined ? {} : { jumpHosts: flags.jump === false ? [] : flags.jump.map((spec) => parseJumpSpec(spec, baseDir)) }),
  };
  if (Object.keys(body).length === 0) {
    throw usageError('nothing to change: give --key, --cert (or --no-cert) or --jump (or --no-jump)', 'what is left out is kept, e.g. erg clusters credentials gh --cert ~/.ssh/erg_key-cert.pub');
  }
  return body;
}

/** A certificate in one line: `valid until … (in 5 h)`, with its key id and serial. */
export function certificateText(c: NonNullable<Cluster['certificate']> | null | undefined): string {
  if (!c) return 'none (the plain key)';
  const until = c.validBefore === null ? 'valid forever' : `${c.status === 'expired' ? 'EXPIRED' : 'valid until'} ${c.validBefore}${c.expiresInS === null ? '' : ` (${relative(c.expiresInS)})`}`;
  return `${until}; key id ${JSON.stringify(c.keyId)}, serial ${c.serial}, principals ${c.principals.join(',') || '(any)'}`;
}

function relative(seconds: number): string {
  const s = Math.abs(seconds);
  const span = s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : s < 172_800 ? `${Math.round(s / 3600)} h` : `${Math.round(s / 86_400)} days`;
  return seconds < 0 ? `${span} ago` : `in ${span}`;
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

function limitsText(c: Cluster): string {
  const limits = [
    c.maxQueuedJobs == null ? null : `${c.maxQueuedJobs} Slurm jobs queued or running`,
    c.maxConcurrentRuns == null ? null : `${c.maxConcurrentRuns} runs in flight`,
  ].filter((l) => l !== null);
  return limits.length === 0 ? "none of erg's own (the site's Slurm limits still apply)" : `at most ${limits.join(', ')}`;
}

/** Which runtime the agents start with and why (the probe's choice), with the setting that led to it. */
function agentRuntimeText(c: Cluster): string {
  const setting = `agentRuntime ${c.agentRuntime ?? 'auto'}`;
  const choice = c.capabilities?.agentRuntime;
  if (!choice) return `${setting}; not probed yet`;
  const where = choice.use === 'staged' ? `, in ${c.runtimeDir}` : '';
  return `${choice.reason}${where} (${setting})${choice.problem ? `; ${choice.problem}` : ''}`;
}

/**
 * The stored node report (`erg-agent doctor --json`) as `erg clusters show` lists it: where and
 * when it was taken, its verdict, then one line per floor (ok / MISSING / unknown) and per check
 * (the counters against their integrated power, GPU + Grace ≤ Module). The whole report: --json.
 */
export function nodeReportFields(stored: Cluster['nodeReport']): [string, string][] {
  if (!stored) return [['Node report', 'none (an admin uploads one: erg clusters node-report NAME FILE, see docs/power-helper.md)']];
  const r = stored.report;
  const s = r.stack;
  const verdict = r.problems.length === 0 ? 'every check holds' : `${r.problems.length} problem(s)`;
  const floor = (v: string) => (v === 'met' ? 'ok' : v === 'missing' ? 'MISSING' : 'unknown');
  return [
    ['Node report', `${stored.node}, taken ${stored.takenAt} (${r.seconds} s sampled; stored ${stored.storedAt}): ${verdict}`],
    ['  Stack', `driver ${s.driverVersion ?? 'none'}, NVML ${s.nvmlVersion ?? 'none'}, CUDA ${s.cudaVersion ?? 'none'}, DCGM ${s.dcgmVersion ?? 'none'}`],
    ...r.floors.map((f): [string, string] => [`  Floor ${f.key}`, `${floor(f.verdict)} (${f.has})`]),
    ...r.counters.map((c): [string, string] => [
      `  Counter ${c.counter}`,
      c.agrees === null ? `not compared${c.power === null ? ' (no power reading of its scope)' : ''}` : `${c.agrees ? 'held' : 'FAILED'}: ${c.diffPercent === null ? 'n/a' : `${c.diffPercent >= 0 ? '+' : ''}${c.diffPercent.toFixed(2)} %`} against ∫${c.power}`,
    ]),
    ...r.moduleFit.map((f): [string, string] => [`  GPU + Grace ≤ module${f.index}`, `${f.holds ? 'held' : 'FAILED'} (${f.failed} of ${f.checked} timestamps over)`]),
    ...r.problems.map((p): [string, string] => ['  Problem', p]),
  ];
}

function clusterFields(c: Cluster): [string, string][] {
  return [
    ['Name', c.name],
    ['SSH', `${c.user}@${c.host}:${c.port}`],
    ['Host key', c.hostKeySha256 ?? `not seen yet (${c.hostKeyPolicy}: pinned at the first connection)`],
    ['Certificate', certificateText(c.certificate)],
    ...(c.jumpHosts ?? []).map((j, i): [string, string] => [
      `Jump host ${i + 1}`,
      `${j.user}@${j.host}:${j.port}, host key ${j.hostKeySha256}, ${j.ownKey ? `own key, certificate ${j.certificate ? certificateText(j.certificate) : 'none'}` : "the cluster's key and certificate"}`,
    ]),
    ['Credentials', `version ${c.credentialsVersion ?? 1}${c.credentialsUpdatedAt ? `, rotated ${c.credentialsUpdatedAt}` : ''}`],
    ['Partition', c.defaultPartition ?? '(Slurm default)'],
    ['Work dir', c.workDir],
    ['Agent', `${c.agentCommand}; pushes to ${c.agentApiUrl ?? '(nothing: spool only, pulled at job end)'}`],
    ['Runtime', agentRuntimeText(c)],
    ['Power model', `${c.modelIdleW} W idle, ${c.modelMaxW} W at full load (for nodes without sensors)`],
    ['Limits', limitsText(c)],
    ['Slurm', slurmVersionText(c)],
    ['Power helper', `${c.powerHelper}: ${powerHelperText(c)}`],
    ['Probed', c.capabilities?.probedAt ?? 'not yet (the scheduler probes a cluster when it first reaches it)'],
    // An API from before node reports says nothing.
    ...(c.nodeReport === undefined ? [] : nodeReportFields(c.nodeReport)),
    ['Last contact', c.lastContactAt ?? 'never'],
    ['Last error', c.lastError ?? 'none'],
    ...(c.warnings ?? []).map((w): [string, string] => ['Warning', w]),
    ['Created', c.createdAt],
    // An API from before deactivation says nothing.
    ...(c.deactivatedAt ? [['Deactivated', `${c.deactivatedAt}: no new campaigns, pending runs held`] as [string, string]] : []),
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
    c.deactivatedAt
      ? ctx.color.yellow('deactivated')
      : c.lastError
      ? ctx.color.red(`error: ${c.lastError}`)
      : (c.warnings ?? []).length > 0
        ? ctx.color.yellow(`warning: ${c.warnings[0]}`)
        : ctx.color.green('ok'),
  ]);
  const columns = ['NAME', 'SSH', 'PARTITION', 'WORK DIR', 'SLURM', 'POWER HELPER', 'LAST CONTACT', 'STATUS'].map((header) => ({ header }));
  ctx.stdout.write(renderTable(columns, rows, { header: ctx.color.bold }));
}

async function show(ctx: CommandContext, name: string, opts: { json?: boolean }): Promise<void> {
  const cluster = await ctx.connect().call((c) => c.GET('/v1/clusters/{name}', { params: { path: { name } } }));
  ctx.stdout.write(opts.json ? JSON.stringify(cluster, null, 2) + '\n' : renderFields(clusterFields(cluster)));
}

/**
 * `erg clusters node-report NAME FILE`: uploads the JSON `erg-agent doctor --json FILE` wrote on
 * one of the cluster's nodes (PUT /v1/clusters/NAME/node-report); the API validates it and keeps
 * the latest with the cluster.
 */
async function nodeReport(ctx: CommandContext, name: string, file: string, opts: { json?: boolean }): Promise<ExitCode> {
  const where = path.resolve(ctx.runtime.cwd, file);
  let report: unknown;
  try {
    report = JSON.parse(readFileSync(where, 'utf8'));
  } catch (err) {
    throw usageError(`cannot read ${file} as JSON: ${(err as Error).message}`, 'write it on a node with: srun -N1 node erg-agent.js doctor --json FILE (docs/power-helper.md)');
  }
  const stored = await ctx.connect().call((c) =>
    c.PUT('/v1/clusters/{name}/node-report', { params: { path: { name } }, body: report as NonNullable<Cluster['nodeReport']>['report'] }),
  );
  if (opts.json) {
    ctx.stdout.write(JSON.stringify(stored, null, 2) + '\n');
    return EXIT.OK;
  }
  ctx.stdout.write(renderFields(nodeReportFields(stored)));
  ctx.stderr.write(`hint: \`erg clusters show ${name}\` shows it with the cluster\n`);
  return EXIT.OK;
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
    throw err instanceof CliError ? flagNames(err, FLAG_OF) : err;
  }
  if (flags.json) {
    ctx.stdout.write(JSON.stringify(cluster, null, 2) + '\n');
  } else {
    ctx.stdout.write(`Cluster ${cluster.name} ${flags.update ? 'saved' : 'registered'}: ${cluster.user}@${cluster.host}:${cluster.port}, work dir ${cluster.workDir}\n`);
    ctx.stderr.write(`hint: submit a campaign with \`cluster: ${cluster.name}\`; the scheduler connects on its next cycle (\`erg clusters show ${cluster.name}\` shows its last contact)\n`);
  }
  return EXIT.OK;
}

async function credentials(ctx: CommandContext, name: string, flags: CredentialsFlags): Promise<ExitCode> {
  const body = credentialsBody(flags, ctx.runtime.cwd);
  let cluster: Cluster;
  try {
    cluster = await ctx.connect().call((c) => c.PUT('/v1/clusters/{name}/credentials', { params: { path: { name } }, body }));
  } catch (err) {
    throw err instanceof CliError ? flagNames(err, CREDENTIAL_FLAG_OF) : err;
  }
  if (flags.json) {
    ctx.stdout.write(JSON.stringify(cluster, null, 2) + '\n');
    return EXIT.OK;
  }
  ctx.stdout.write(`Credentials of ${cluster.name} rotated (version ${cluster.credentialsVersion}): certificate ${certificateText(cluster.certificate)}` +
    `${cluster.jumpHosts.length > 0 ? `; via ${cluster.jumpHosts.map((j) => `${j.user}@${j.host}:${j.port}`).join(' → ')}` : ''}\n`);
  for (const w of cluster.warnings) ctx.stderr.write(`warning: ${w}\n`);
  ctx.stderr.write(`hint: the scheduler uses them for its next connection; commands in flight finish on the old one (\`erg clusters show ${cluster.name}\` shows its last contact)\n`);
  return EXIT.OK;
}

interface PolicyFlags {
  project?: string;
  allow?: string[];
  disallow?: string[];
  json?: boolean;
}

/**
 * `erg clusters policy`: which internal hosts a project's clusters may be (GET
 * /v1/projects/NAME/cluster-policy). With --allow / --disallow an admin changes it: the list read,
 * with those hosts added and removed, replaces the stored one (PUT).
 */
async function policy(ctx: CommandContext, flags: PolicyFlags): Promise<void> {
  const name = flags.project ?? 'default';
  const params = { params: { path: { name } } };
  const api = ctx.connect();
  let shown = await api.call((c) => c.GET('/v1/projects/{name}/cluster-policy', params));
  const allow = flags.allow ?? [];
  const disallow = new Set((flags.disallow ?? []).map((h) => h.toLowerCase()));
  if (allow.length > 0 || disallow.size > 0) {
    const kept = shown.allowHosts.filter((h) => !disallow.has(h.toLowerCase()));
    const allowHosts = [...kept, ...allow.filter((h) => !kept.some((k) => k.toLowerCase() === h.toLowerCase()))];
    try {
      shown = await api.call((c) => c.PUT('/v1/projects/{name}/cluster-policy', { ...params, body: { allowHosts } }));
    } catch (err) {
      if (!(err instanceof CliError)) throw err;
      // The token is fine (it read the policy): only its role is not enough.
      if (err.api?.status === 403) {
        throw new CliError(`only admins change a project's cluster policy (it lets the project's clusters into erg's own network)`, EXIT.UNDECIDED, {
          hint: `ask an admin to run: erg clusters policy --project ${name}${allow.map((h) => ` --allow ${h}`).join('')}${[...(flags.disallow ?? [])].map((h) => ` --disallow ${h}`).join('')}`,
          api: err.api,
        });
      }
      throw withFlagNames(err, Object.fromEntries(allowHosts.map((_, i) => [`allowHosts.${i}`, '--allow'])));
    }
  }
  if (flags.json) {
    ctx.stdout.write(JSON.stringify(shown, null, 2) + '\n');
    return;
  }
  ctx.stdout.write(
    shown.allowHosts.length === 0
      ? `Clusters of project ${shown.project} may be on public addresses only.\n`
      : `Clusters of project ${shown.project} may be on public addresses and on these internal hosts: ${shown.allowHosts.join(', ')}\n`,
  );
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
      .option('--agent-runtime <setting>', "auto (default): agentCommand where it is Node.js 18+, else erg's staged Node.js and koffi; command: always agentCommand; staged: always erg's")
      .option('--runtime-dir <dir>', "where erg stages its runtime on the cluster (default <work dir>/.erg/runtime)")
      .option('--cert <file>', "an OpenSSH user certificate of the key (the site CA's erg_key-cert.pub)")
      .option('--jump <spec>', `a jump host in front of the login node, ${JUMP_SPEC}; repeat for a chain, in the order erg passes them (as ssh -J)`, collect)
      .option('--max-queued-jobs <n>', "most Slurm jobs erg keeps queued or running on the cluster (each array task counts): the site's MaxSubmitJobs for your user, or under it; none: no cap", parseCap(1))
      .option('--max-concurrent-runs <n>', 'most runs submitting, queued, running or completing at once; none: no cap', parseCap(0))
      .addOption(new Option('--update', 'replace the settings of an existing cluster of that name (PUT)'))
      .addOption(jsonOption("print the API's JSON of the cluster")),
    'erg clusters add --from .erg/local-slurm/cluster.json',
    'erg clusters add --name gh --host login.example.org --user alice --key-file ~/.ssh/erg_ed25519 \\\n      --host-key SHA256:abc… --work-dir /scratch/alice/erg --partition gh200',
    'erg clusters add --from .erg/local-slurm/cluster.json --agent-api-url http://127.0.0.1:8080 --update',
    "erg clusters add --name gh --host login.example.org --user alice --key-file ~/.ssh/erg_ed25519 --cert ~/.ssh/erg_ed25519-cert.pub \\\n      --host-key SHA256:abc… --jump 'alice@bastion.example.org:22,host-key=SHA256:def…' --work-dir /scratch/alice/erg",
  ).action(act((ctx, cmd) => add(ctx, cmd.opts<AddFlags>())));

  withExamples(
    clusters
      .command('credentials')
      .summary("rotate a cluster's key, certificate or jump hosts")
      .description("rotate what erg logs in with (PUT /v1/clusters/NAME/credentials), without downtime: what you leave out is kept")
      .argument('<name>', 'cluster name')
      .option('--key <file>', 'the new private key (unencrypted)')
      .option('--cert <file>', 'the new OpenSSH user certificate of the key (new or kept)')
      .option('--no-cert', 'log in with the plain key from now on')
      .option('--jump <spec>', `the new jump hosts, ${JUMP_SPEC}; repeat for a chain (replaces the whole chain)`, collect)
      .option('--no-jump', 'connect to the login node directly from now on')
      .addOption(jsonOption("print the API's JSON of the cluster")),
    'erg clusters credentials gh --cert ~/.ssh/erg_ed25519-cert.pub',
    'erg clusters credentials gh --key ~/.ssh/erg_new --cert ~/.ssh/erg_new-cert.pub',
    "erg clusters credentials gh --jump 'alice@bastion.example.org:22,host-key=SHA256:def…,key=~/.ssh/bastion_key'",
  ).action(act((ctx, cmd) => credentials(ctx, cmd.processedArgs[0] as string, cmd.opts<CredentialsFlags>())));

  withExamples(
    clusters
      .command('node-report')
      .summary("store a node's first-contact report with the cluster")
      .description(
        'upload the JSON `erg-agent doctor --json FILE` wrote on one of the cluster\'s nodes (PUT /v1/clusters/NAME/node-report; maintainers and admins); ' +
          '`erg clusters show NAME` shows its verdict',
      )
      .argument('<name>', 'cluster name')
      .argument('<file>', 'the report (JSON)')
      .addOption(jsonOption("print the API's JSON of the stored report")),
    'erg clusters node-report gh gh-node-1.json',
  ).action(act((ctx, cmd) => nodeReport(ctx, cmd.processedArgs[0] as string, cmd.processedArgs[1] as string, cmd.opts())));

  withExamples(
    clusters
      .command('policy')
      .summary("which internal hosts a project's clusters may be (admins change it)")
      .description(
        "show the project's cluster policy (GET /v1/projects/NAME/cluster-policy): erg connects to a cluster's login node, or its first jump host, " +
          'only on public addresses unless the policy allows the host; with --allow / --disallow, change it (admins; PUT)',
      )
      .option('--project <name>', 'the project (default: default)')
      .option('--allow <host>', 'allow a host: a name, *.suffix, IP address or CIDR block (repeat for several)', collect)
      .option('--disallow <host>', 'remove an entry (repeat for several)', collect)
      .addOption(jsonOption("print the API's JSON of the policy")),
    'erg clusters policy --project default',
    'erg clusters policy --project default --allow 127.0.0.1',
    "erg clusters policy --project hpc --allow 'login.cluster.internal' --allow 10.20.0.0/16",
  ).action(act((ctx, cmd) => policy(ctx, cmd.opts<PolicyFlags>())));
  registerDeactivation(clusters, 'cluster', act);
}
