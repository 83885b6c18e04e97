// erg run RUN [--verbose] [--json]: one run — its state and Slurm job, what it was measured on,
// at which power state, and its energy figures.
import type { Command } from 'commander';
import { ErgApiError } from '@erg/client';
import type { CommandContext } from '../context';
import { jsonOption, withExamples, type Act } from './register';
import { runReport, type RunEnergyAnswer } from '../run/render';
import { parseId } from './args';

async function run(ctx: CommandContext, id: string, opts: { verbose?: boolean; json?: boolean }): Promise<void> {
  const api = ctx.connect();
  const view = await api.call((c) => c.GET('/v1/runs/{id}', { params: { path: { id } } }));
  const energy = await api.call(async (c): Promise<{ data?: RunEnergyAnswer }> => {
    try {
      const { data } = await c.GET('/v1/runs/{id}/energy', { params: { path: { id } } });
      return { data: data && { figures: data } };
    } catch (err) {
      // 409: not ended yet, or no telemetry to compute from; the rest of the run is still worth showing.
      if (err instanceof ErgApiError && err.status === 409) return { data: { figures: null, why: err.message } };
      throw err;
    }
  });
  if (opts.json) return void ctx.stdout.write(JSON.stringify({ run: view, energy: energy.figures }, null, 2) + '\n');
  ctx.stdout.write(runReport(view, energy, ctx.color, { verbose: opts.verbose === true }));
}

export function registerRun(program: Command, act: Act): void {
  withExamples(
    program
      .command('run')
      .summary('show one run: state, provenance, power state, energy')
      .description(
        "one run: state, reason, configuration, Slurm job, nodes and times; each node's provenance (GPUs, driver, CUDA, NVML, VBIOS, CPU, kernel, Slurm, container, modules, workload commit); " +
          "the power state the node helper set; and its energy figures with flags, the power state in force and Slurm's own figure",
      )
      .argument('<run>', 'run id (erg runs CAMPAIGN lists them)', parseId('run'))
      .option('--verbose', 'also the GPUs\' UUIDs')
      .addOption(jsonOption('print the API\'s JSON: { run, energy } (energy null while there are no figures)')),
    'erg run 6f1c2a9e-0b7d-4c1e-9a55-3f2d8e4b7c10',
    'erg run 6f1c2a9e-0b7d-4c1e-9a55-3f2d8e4b7c10 --json | jq .energy.flags',
  ).action(act((ctx, cmd) => run(ctx, cmd.processedArgs[0] as string, cmd.opts())));
}
