// The `erg` command tree. `buildProgram` makes it from a runtime so tests run the very commands a
// user runs, with captured output; `runCli` runs one command line and returns its exit code.
import { Command, CommanderError } from 'commander';
import { registerCampaigns } from './commands/campaigns';
import { registerCancel } from './commands/cancel';
import { registerClusters } from './commands/clusters';
import { registerConfig, registerLogin } from './commands/login';
import { registerLogs } from './commands/logs';
import { registerPhases } from './commands/phases';
import { registerDecisions } from './commands/decisions';
import { registerEvidence } from './commands/evidence';
import { registerResults } from './commands/results';
import { registerRun } from './commands/run';
import { registerRuns } from './commands/runs';
import { registerStatus } from './commands/status';
import { registerRegress } from './commands/regress';
import { registerReport } from './commands/report';
import { registerSubmit } from './commands/submit';
import { registerSuites } from './commands/suites';
import { registerTokens } from './commands/tokens';
import { registerUsers } from './commands/users';
import { registerValidate } from './commands/validate';
import { registerWatch } from './commands/watch';
import type { Act } from './commands/register';
import { CommandContext, type CliRuntime, type GlobalOptions } from './context';
import { CliError, EXIT, type ExitCode } from './errors';

function version(): string {
  // package.json sits one folder above both src/ (tests) and dist/ (tsc's build); a require (not a
  // file read) lets esbuild inline it into the one-file bundle, dist/erg, which has no package.json beside it.
  const pkg = require('../package.json') as { version: string };
  return pkg.version;
}

export function buildProgram(runtime: CliRuntime, outcome: { code: ExitCode } = { code: EXIT.OK }): Command {
  const program = new Command('erg');
  program
    .description('Run energy studies on Slurm clusters through the erg API: register clusters, submit campaigns, watch them, read their results.')
    .version(version(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    .option('--api-url <url>', 'the API, e.g. http://127.0.0.1:8080 (else ERG_API_URL, the config file, the local quickstart)')
    .option('--token <token>', 'the API token (else ERG_TOKEN, the config file, .erg/token)')
    .option('--no-color', 'never colour the output (colour is used only on a terminal, and never with NO_COLOR set)')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .configureOutput({
      writeOut: (text) => runtime.stdout.write(text),
      writeErr: (text) => runtime.stderr.write(text),
      outputError: (text, write) => write(`erg: ${text.replace(/^error: /, '')}`),
    })
    .showHelpAfterError('(add --help for usage)')
    // Commander would call process.exit; we want the exit code (2 for usage errors) and tests want control.
    .exitOverride();
  program.addHelpText(
    'after',
    '\nExamples:\n  erg login --api-url http://127.0.0.1:8080 < token.txt\n  erg submit examples/quickstart.yaml --watch\n  erg results 7d3c… --format csv > results.csv\n\nExit codes: 0 success, 1 the thing checked is bad (invalid spec, failed campaign, request refused), 2 could not run or decide.\n',
  );

  const act: Act =
    (action) =>
    async (...args) => {
      const command = args[args.length - 1] as Command;
      const ctx = new CommandContext(runtime, command.optsWithGlobals<GlobalOptions>());
      const code = await action(ctx, command);
      outcome.code = code ?? EXIT.OK;
    };

  registerLogin(program, act);
  registerConfig(program, act);
  registerClusters(program, act);
  registerValidate(program, act);
  registerSubmit(program, act);
  registerCampaigns(program, act);
  registerStatus(program, act);
  registerWatch(program, act);
  registerRuns(program, act);
  registerRun(program, act);
  registerPhases(program, act);
  registerDecisions(program, act);
  registerLogs(program, act);
  registerCancel(program, act);
  registerResults(program, act);
  registerEvidence(program, act);
  registerReport(program, act);
  registerSuites(program, act);
  registerRegress(program, act);
  registerTokens(program, act);
  registerUsers(program, act);
  return program;
}

/** Prints a CliError (or anything else thrown) on stderr and gives its exit code. */
export function reportError(err: unknown, runtime: CliRuntime): ExitCode {
  if (err instanceof CommanderError) {
    // Commander has already printed the message (or the help / version asked for).
    return err.exitCode === 0 ? EXIT.OK : EXIT.UNDECIDED;
  }
  if (err instanceof CliError) {
    const lines = [`erg: ${err.message}`, ...err.details.map((d) => `  ${d}`), ...(err.hint ? [`hint: ${err.hint}`] : [])];
    runtime.stderr.write(lines.join('\n') + '\n');
    return err.exitCode;
  }
  const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
  runtime.stderr.write(`erg: unexpected error: ${detail}\nhint: this is a bug in erg; please report it with the command you ran\n`);
  return EXIT.UNDECIDED;
}

/** Runs one command line (without `node` and the script: `['status', ID]`) and returns its exit code. */
export async function runCli(argv: readonly string[], runtime: CliRuntime): Promise<ExitCode> {
  const outcome: { code: ExitCode } = { code: EXIT.OK };
  try {
    const program = buildProgram(runtime, outcome);
    if (argv.length === 0) {
      program.outputHelp({ error: true });
      return EXIT.UNDECIDED;
    }
    await program.parseAsync([...argv], { from: 'user' });
    return outcome.code;
  } catch (err) {
    return reportError(err, runtime);
  }
}
