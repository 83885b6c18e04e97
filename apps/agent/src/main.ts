import './runtime-flags';
import { AgentStartError, startAgent } from './agent';
import { ConfigError, parseCommandLine, USAGE } from './config';
import { DOCTOR_USAGE, parseDoctorCommandLine, renderDoctorReport, runDoctor } from './doctor';
import { writeFileAtomic } from './files';
import { createLogger, errorMessage } from './log';

// The agent's entry point (the bundle's): parse options once, start, stop on SIGTERM/SIGINT/SIGUSR2.
// Exit codes: 0 stopped by a signal; 2 bad options; 3 could not start; 1 anything unexpected.

export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  if (argv[0] === 'doctor') return doctor(argv.slice(1), env);
  let parsed;
  try {
    parsed = parseCommandLine(argv, env);
  } catch (err) {
    process.stderr.write(`erg-agent: ${errorMessage(err)}\n`);
    process.exitCode = err instanceof ConfigError ? 2 : 1;
    return;
  }
  if (parsed.help) {
    process.stdout.write(USAGE);
    return;
  }
  const log = createLogger(parsed.config.logLevel);
  let agent;
  try {
    agent = await startAgent(parsed.config, log);
  } catch (err) {
    log.error('agent could not start', { error: errorMessage(err) });
    if (parsed.config.logLevel === 'silent') process.stderr.write(`erg-agent: ${errorMessage(err)}\n`);
    process.exit(err instanceof AgentStartError ? 3 : 1);
  }
  const onSignal = (signal: NodeJS.Signals) => {
    log.info('stopping', { signal });
    agent.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error('stop failed', { error: errorMessage(err) });
        process.exit(1);
      },
    );
  };
  // `on`, not `once`: a second signal (srun and scancel may send more than one) must not kill the
  // agent mid-drain with the default action; stop() is idempotent.
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // SIGUSR2 is how job.sh stops the agents: srun forwards it to its tasks, whereas SIGTERM
  // makes srun kill the step outright (no drain). SIGUSR1 is Node's debugger signal.
  process.on('SIGUSR2', onSignal);
}

/** `erg-agent doctor …`: first contact with a node (doctor.ts). Exit 0 all checks hold, 4 one failed, 2 bad options. */
async function doctor(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  let parsed;
  try {
    parsed = parseDoctorCommandLine(argv, env);
  } catch (err) {
    process.stderr.write(`erg-agent doctor: ${errorMessage(err)}\n`);
    process.exitCode = err instanceof ConfigError ? 2 : 1;
    return;
  }
  if (parsed.help) {
    process.stdout.write(DOCTOR_USAGE);
    return;
  }
  const report = await runDoctor(parsed.config, parsed.options, createLogger(parsed.config.logLevel));
  const json = `${JSON.stringify(report, null, 2)}\n`;
  if (parsed.options.json === '-') process.stdout.write(json);
  else {
    process.stdout.write(renderDoctorReport(report));
    if (parsed.options.json !== undefined) writeFileAtomic(parsed.options.json, json);
  }
  process.exitCode = report.problems.length === 0 ? 0 : 4;
}

process.on('uncaughtException', (err) => {
  // Whatever was spooled and fsync'd stays; say what happened as a JSON line like every other event.
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'error', event: 'agent crashed', error: errorMessage(err), stack: err.stack })}\n`);
  process.exit(1);
});

if (require.main === module) {
  void main(process.argv.slice(2), process.env);
}
