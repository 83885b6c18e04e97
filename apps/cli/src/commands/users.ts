// erg users list | create NAME | deactivate NAME | reactivate NAME (admins): who may sign in.
import type { Command } from 'commander';
import type { CommandContext } from '../context';
import { renderTable } from '../output/table';
import { jsonOption, withExamples, type Act } from './register';
import { registerDeactivation } from './deactivation';

async function list(ctx: CommandContext, opts: { json?: boolean }): Promise<void> {
  const { items } = await ctx.connect().call((c) => c.GET('/v1/users'));
  if (opts.json) return void ctx.stdout.write(JSON.stringify({ items }, null, 2) + '\n');
  ctx.stdout.write(
    renderTable(
      [{ header: 'NAME' }, { header: 'KIND' }, { header: 'ADMIN' }, { header: 'CREATED' }, { header: 'STATE' }],
      items.map((u) => [u.name, u.kind, u.isAdmin ? 'yes' : 'no', u.createdAt, u.deactivatedAt ? `deactivated ${u.deactivatedAt}` : 'active']),
      { header: ctx.color.bold },
    ),
  );
}

async function create(ctx: CommandContext, name: string, opts: { service?: boolean; admin?: boolean; json?: boolean }): Promise<void> {
  const user = await ctx.connect().call((c) =>
    c.POST('/v1/users', { body: { name, kind: opts.service ? 'service' : 'person', isAdmin: opts.admin ?? false } }),
  );
  if (opts.json) return void ctx.stdout.write(JSON.stringify(user, null, 2) + '\n');
  ctx.stdout.write(`User "${user.name}" created (${user.kind}${user.isAdmin ? ', admin' : ''}); give them a role with PUT /v1/projects/NAME/members/${user.name} and a token with erg tokens create --user ${user.name}.\n`);
}

export function registerUsers(program: Command, act: Act): void {
  const users = withExamples(
    program.command('users').summary('users (admins): list, create, deactivate').description('the users who may sign in (admins only)'),
    'erg users list',
    'erg users deactivate alice   # a departed colleague: tokens refused, streams closed, history kept',
  );
  withExamples(users.command('list').description('every user, with whether they are deactivated').addOption(jsonOption()), 'erg users list').action(
    act((ctx, cmd) => list(ctx, cmd.opts())),
  );
  withExamples(
    users
      .command('create')
      .description('create a user (a person, or with --service an account for CI)')
      .argument('<name>', 'lower-case letters, digits, ., _ and -')
      .option('--service', 'an account for a CI pipeline')
      .option('--admin', 'a global admin')
      .addOption(jsonOption()),
    'erg users create alice',
    'erg users create ci-gemm --service',
  ).action(act((ctx, cmd) => create(ctx, cmd.processedArgs[0] as string, cmd.opts())));
  registerDeactivation(users, 'user', act);
}
