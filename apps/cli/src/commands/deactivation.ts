// `deactivate NAME` and `reactivate NAME` under `erg users`, `erg projects` and `erg clusters`:
// retiring what is no longer used without deleting its history (docs/security.md, "Revocation and deactivation").
import type { Command } from 'commander';
import type { CommandContext } from '../context';
import { jsonOption, withExamples, type Act } from './register';

type Kind = 'user' | 'project' | 'cluster';

/** What deactivating each kind does, as the command's help and its output say it. */
const EFFECT: Record<Kind, { deactivated: string; reactivated: string; who: string }> = {
  user: {
    deactivated: 'their tokens are refused and their event streams closed; their campaigns and memberships stay',
    reactivated: 'their tokens (not revoked, not expired) work again',
    who: 'admins',
  },
  project: {
    deactivated: 'nothing new starts in it and its pending runs are held; its history stays readable',
    reactivated: 'new work may start in it, and its held runs are submitted',
    who: 'admins',
  },
  cluster: {
    deactivated: 'no campaign may name it and its pending runs are held; its jobs in Slurm run to their end',
    reactivated: 'campaigns may name it again, and its held runs are submitted',
    who: "the cluster's maintainers",
  },
};

async function change(ctx: CommandContext, kind: Kind, name: string, verb: 'deactivate' | 'reactivate', opts: { json?: boolean }): Promise<void> {
  const api = ctx.connect();
  const path = { params: { path: { name } } };
  const body =
    kind === 'user'
      ? await api.call((c) => (verb === 'deactivate' ? c.POST('/v1/users/{name}/deactivate', path) : c.POST('/v1/users/{name}/reactivate', path)))
      : kind === 'project'
        ? await api.call((c) => (verb === 'deactivate' ? c.POST('/v1/projects/{name}/deactivate', path) : c.POST('/v1/projects/{name}/reactivate', path)))
        : await api.call((c) => (verb === 'deactivate' ? c.POST('/v1/clusters/{name}/deactivate', path) : c.POST('/v1/clusters/{name}/reactivate', path)));
  if (opts.json) return void ctx.stdout.write(JSON.stringify(body, null, 2) + '\n');
  ctx.stdout.write(
    body.deactivatedAt
      ? `${kind[0]!.toUpperCase()}${kind.slice(1)} "${body.name}" is deactivated (since ${body.deactivatedAt}): ${EFFECT[kind].deactivated}.\n`
      : `${kind[0]!.toUpperCase()}${kind.slice(1)} "${body.name}" is active: ${EFFECT[kind].reactivated}.\n`,
  );
}

/** Adds `deactivate <name>` and `reactivate <name>` to `parent` (erg users, erg projects, erg clusters). */
export function registerDeactivation(parent: Command, kind: Kind, act: Act): void {
  for (const verb of ['deactivate', 'reactivate'] as const) {
    const effect = verb === 'deactivate' ? EFFECT[kind].deactivated : EFFECT[kind].reactivated;
    withExamples(
      parent
        .command(verb)
        .summary(`${verb} a ${kind} (${EFFECT[kind].who})`)
        .description(`${verb} a ${kind} (${EFFECT[kind].who}): ${effect}. Idempotent.`)
        .argument('<name>', `${kind} name`)
        .addOption(jsonOption(`print the API's JSON of the ${kind}`)),
      `erg ${kind}s ${verb} ${kind === 'user' ? 'alice' : kind === 'project' ? 'gemm' : 'gh'}`,
    ).action(act((ctx, cmd) => change(ctx, kind, cmd.processedArgs[0] as string, verb, cmd.opts())));
  }
}
