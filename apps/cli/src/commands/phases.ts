// erg phases RUN [--json]: where a run's energy went — per phase its workload marked, per step.
import type { Command } from 'commander';
import { ErgApiError } from '@erg/client';
import type { CommandContext } from '../context';
import { phasesReport, type RunPhasesAnswer } from '../phases/render';
import { jsonOption, withExamples, type Act } from './register';
import { parseId } from './args';

async function phases(ctx: CommandContext, id: string, opts: { json?: boolean }): Promise<void> {
  const api = ctx.connect();
  if (opts.json) {
    // A script gets the API's body or, when there is none (409 too), an error and a non-zero exit.
    const view = await api.call((c) => c.GET('/v1/runs/{id}/phases', { params: { path: { id } } }));
    return void ctx.stdout.write(JSON.stringify(view, null, 2) + '\n');
  }
  const answer = await api.call(async (c): Promise<{ data?: RunPhasesAnswer }> => {
    try {
      const { data } = await c.GET('/v1/runs/{id}/phases', { params: { path: { id } } });
      return { data: data && { view: data } };
    } catch (err) {
      // 409: not ended yet, or no telemetry to compute from: said as `erg run` says it for energy.
      if (err instanceof ErgApiError && err.status === 409) return { data: { view: null, why: err.message } };
      throw err;
    }
  });
  ctx.stdout.write(phasesReport(answer, ctx.color));
}

export function registerPhases(program: Command, act: Act): void {
  withExamples(
    program
      .command('phases')
      .summary("where a run's energy went: per phase and per step its workload marked")
      .description(
        "a finished run's energy per phase (erg-mark, `import erg`, or the spec's phases regexes): occurrences, time, self and inclusive energy with their 95 % interval, " +
          'mean power and share of the run, the time inside no phase last; then per step counter the energy and time per step, and the warnings',
      )
      .argument('<run>', 'run id (erg runs CAMPAIGN lists them)', parseId('run'))
      .addOption(jsonOption("print the API's JSON (GET /v1/runs/{id}/phases: figures, marks, segments)"))
      .addHelpText('after', '\nUnits with prefixes (kJ, ms, W); --json carries raw SI numbers (J, s, W). A run that has not ended has no figures yet (--json: exit 1).'),
    'erg phases 6f1c2a9e-0b7d-4c1e-9a55-3f2d8e4b7c10',
    "erg phases 6f1c2a9e-0b7d-4c1e-9a55-3f2d8e4b7c10 --json | jq '.phases.phases[] | {name, selfEnergyJ}'",
  ).action(act((ctx, cmd) => phases(ctx, cmd.processedArgs[0] as string, cmd.opts())));
}
