// erg tokens create|list|revoke, erg projects list: who may do what (docs/security.md).
import { InvalidArgumentError, type Command } from 'commander';
import type { Token } from '@erg/client';
import type { CommandContext } from '../context';
import { renderTable } from '../output/table';
import { NO_VALUE } from '@erg/format';
import { jsonOption, withExamples, type Act } from './register';
import { registerDeactivation } from './deactivation';
import { parseChoice } from './args';
import { RoleName } from '@erg/spec';

interface CreateOptions {
  expiresIn?: number;
  project?: string[];
  role?: 'viewer' | 'researcher' | 'maintainer';
  user?: string;
  json?: boolean;
}

/** "30d", "12h" or a number of days → days. */
export function parseExpiry(value: string): number {
  const m = /^(\d+(?:\.\d+)?)(d|h)?$/.exec(value.trim());
  if (!m) throw new InvalidArgumentError('expected a duration such as 30d or 12h');
  const days = Number(m[1]) / (m[2] === 'h' ? 24 : 1);
  if (!(days > 0 && days <= 3650)) throw new InvalidArgumentError('expected a duration from 1h to 3650d');
  return days;
}

function scopeText(t: Token): string {
  const projects = t.projects.length > 0 ? t.projects.join(',') : 'all projects';
  return t.role ? `${projects} as ${t.role} at most` : projects;
}

async function create(ctx: CommandContext, name: string, opts: CreateOptions): Promise<void> {
  const created = await ctx.connect().call((c) =>
    c.POST('/v1/tokens', {
      body: {
        name,
        ...(opts.expiresIn === undefined ? {} : { expiresInDays: opts.expiresIn }),
        ...(opts.project ? { projects: opts.project } : {}),
        ...(opts.role ? { role: opts.role } : {}),
        ...(opts.user ? { user: opts.user } : {}),
      },
    }),
  );
  if (opts.json) return void ctx.stdout.write(JSON.stringify(created, null, 2) + '\n');
  // The token alone on stdout, so `TOKEN=$(erg tokens create ci -q)`-style use is easy; the rest on stderr.
  ctx.stderr.write(`Token "${created.name}" for ${created.user} (${created.id}): ${scopeText(created)}, expires ${created.expiresAt ?? 'never'}.\nIt is shown once; store it now:\n`);
  ctx.stdout.write(`${created.token}\n`);
}

async function list(ctx: CommandContext, opts: { all?: boolean; json?: boolean }): Promise<void> {
  const { items } = await ctx.connect().call((c) => c.GET('/v1/tokens', { params: { query: { all: opts.all ? 'true' : 'false' } } }));
  if (opts.json) return void ctx.stdout.write(JSON.stringify({ items }, null, 2) + '\n');
  if (items.length === 0) return void ctx.stdout.write('No tokens.\n');
  ctx.stdout.write(
    renderTable(
      [{ header: 'ID' }, { header: 'NAME' }, { header: 'USER' }, { header: 'PREFIX' }, { header: 'SCOPE' }, { header: 'EXPIRES' }, { header: 'LAST USED' }, { header: 'STATE' }],
      items.map((t) => [t.id, t.name, t.user, `${t.prefix}…`, scopeText(t), t.expiresAt ?? 'never', t.lastUsedAt ?? NO_VALUE, t.revokedAt ? `revoked ${t.revokedAt}` : 'active']),
      { header: ctx.color.bold },
    ),
  );
}

async function revoke(ctx: CommandContext, id: string, opts: { json?: boolean }): Promise<void> {
  const token = await ctx.connect().call((c) => c.DELETE('/v1/tokens/{id}', { params: { path: { id } } }));
  if (opts.json) return void ctx.stdout.write(JSON.stringify(token, null, 2) + '\n');
  ctx.stdout.write(`Token "${token.name}" (${token.id}) revoked at ${token.revokedAt}; it no longer works.\n`);
}

async function projects(ctx: CommandContext, opts: { json?: boolean }): Promise<void> {
  const { items } = await ctx.connect().call((c) => c.GET('/v1/projects'));
  if (opts.json) return void ctx.stdout.write(JSON.stringify({ items }, null, 2) + '\n');
  if (items.length === 0) return void ctx.stdout.write('You have no role in any project.\n');
  ctx.stdout.write(
    renderTable(
      [{ header: 'PROJECT' }, { header: 'ROLE' }, { header: 'DESCRIPTION' }],
      items.map((p) => [p.deactivatedAt ? `${p.name} (deactivated)` : p.name, p.role ?? NO_VALUE, p.description ?? '']),
      { header: ctx.color.bold },
    ),
  );
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function registerTokens(program: Command, act: Act): void {
  const tokens = withExamples(
    program.command('tokens').summary('API tokens: create, list, revoke').description('your API tokens: create one (shown once), list them, revoke one'),
    'erg tokens create laptop --expires-in 90d',
    'erg tokens create gitlab-nightly --project gemm --role researcher --user ci-gemm   # admins: a service account\'s token',
  );
  withExamples(
    tokens
      .command('create')
      .summary('create a token (printed once on stdout)')
      .description('create an API token; it is printed once, on stdout. It may do no more than the token that creates it.')
      .argument('<name>', 'what it is for, e.g. laptop or "gitlab nightly"')
      .option('--expires-in <duration>', 'e.g. 30d or 12h (default: never)', parseExpiry)
      .option('--project <name>', 'narrow it to this project (repeatable)', collect)
      .option('--role <role>', 'narrow it to at most this role: viewer, researcher or maintainer', parseChoice(RoleName))
      .option('--user <name>', 'admins: create it for this user (a service account for CI)')
      .addOption(jsonOption("print the API's JSON (with the token)")),
    'erg tokens create ci --project gemm --role researcher --expires-in 365d',
  ).action(act((ctx, cmd) => create(ctx, cmd.processedArgs[0] as string, cmd.opts<CreateOptions>())));
  withExamples(
    tokens.command('list').summary('your tokens').description('your tokens (never their secrets): scope, expiry, last use, revoked or active').option('--all', "admins: everyone's").addOption(jsonOption()),
    'erg tokens list',
  ).action(act((ctx, cmd) => list(ctx, cmd.opts())));
  withExamples(
    tokens.command('revoke').summary('revoke a token').description('revoke one of your tokens (admins: anyone\'s); it stops working at once').argument('<id>', 'token id (erg tokens list)').addOption(jsonOption()),
    'erg tokens revoke 0b6f1d2e-3c4a-4b5d-8e6f-7a8b9c0d1e2f',
  ).action(act((ctx, cmd) => revoke(ctx, cmd.processedArgs[0] as string, cmd.opts())));

  const projectsCommand = withExamples(
    program.command('projects').summary('the projects you have a role in; admins: deactivate, reactivate').description('the projects you have a role in'),
    'erg projects',
    'erg projects deactivate gemm   # admins: nothing new starts in it, its history stays',
  );
  // `erg projects` alone lists them, as it always did.
  withExamples(
    projectsCommand.command('list', { isDefault: true }).description('the projects you have a role in, with your role (admins: every project)').addOption(jsonOption()),
    'erg projects',
  ).action(act((ctx, cmd) => projects(ctx, cmd.opts())));
  registerDeactivation(projectsCommand, 'project', act);
}
