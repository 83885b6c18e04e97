import os from 'node:os';
import { ConfigError, parseCommandLine, USAGE } from '../src/config';

const RUN = '6f1c2a3e-8b4d-4c5e-9f60-7a8b9c0d1e2f';
const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  const r = parseCommandLine(argv, env);
  if (r.help) throw new Error('help');
  return r.config;
};
const errorOf = (argv: string[], env: NodeJS.ProcessEnv = {}): string => {
  try {
    parseCommandLine(argv, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('parseCommandLine', () => {
  test('defaults fill in everything but the run id and spool dir', () => {
    const c = parse(['--run-id', RUN, '--spool-dir', '/tmp/s']);
    expect(c).toMatchObject({
      runId: RUN,
      spoolDir: '/tmp/s',
      intervalMs: 1000,
      batchMs: 1000,
      node: os.hostname(),
      modelIdleW: 60,
      modelMaxW: 250,
      sysfsRoot: '/',
      procfsRoot: '/proc',
      nvmlLib: 'libnvidia-ml.so.1',
      nvidiaSmi: 'nvidia-smi',
      srun: 'srun',
      perf: 'perf',
      sources: 'auto',
      drainMs: 3000,
      maxBatchSamples: 50000,
      logLevel: 'warn',
    });
    expect(c.apiUrl).toBeUndefined();
    expect(c.workloadDir).toBeUndefined();
    expect(c.job).toEqual({ loadedModules: [], container: null });
  });

  test('every option parses and coerces; --sources takes a list', () => {
    const c = parse([
      '--run-id', RUN, '--spool-dir', 's', '--api-url', 'https://erg.example/api', '--token-file', 't', '--interval-ms', '100',
      '--batch-ms', '500', '--node', 'gh-001', '--model-idle-w', '40', '--model-max-w', '300', '--sysfs-root', '/x', '--procfs-root', '/y',
      '--nvml-lib', '/l.so', '--nvidia-smi', '/bin/smi', '--sources', 'hwmon, procfs,hwmon', '--drain-ms', '0', '--max-batch-samples', '10',
      '--srun', '/opt/slurm/bin/srun', '--workload-dir', '/home/u/bench', '--perf', '/usr/bin/perf',
    ]);
    expect(c).toMatchObject({ apiUrl: 'https://erg.example/api', intervalMs: 100, batchMs: 500, node: 'gh-001', modelIdleW: 40, modelMaxW: 300, sources: ['hwmon', 'procfs'], drainMs: 0, maxBatchSamples: 10, srun: '/opt/slurm/bin/srun', workloadDir: '/home/u/bench', perf: '/usr/bin/perf' });
  });

  test('the environment supplies ERG_AGENT_<OPTION>; the command line wins', () => {
    const env = { ERG_AGENT_RUN_ID: RUN, ERG_AGENT_SPOOL_DIR: '/env', ERG_AGENT_INTERVAL_MS: '250', ERG_AGENT_NODE: 'from-env' };
    expect(parse([], env)).toMatchObject({ runId: RUN, spoolDir: '/env', intervalMs: 250, node: 'from-env' });
    expect(parse(['--node', 'from-argv'], env).node).toBe('from-argv');
  });

  test('--help wins over everything else', () => {
    expect(parseCommandLine(['--help'], {})).toEqual({ help: true });
    expect(USAGE).toContain('--run-id');
    for (const option of ['--spool-dir', '--api-url', '--token-file', '--sources', '--drain-ms', '--max-batch-samples', '--nvml-lib', '--nvidia-smi', '--srun', '--workload-dir', '--perf']) expect(USAGE).toContain(option);
    for (const variable of ['LOADEDMODULES', 'ERG_CONTAINER_IMAGE', 'ERG_CONTAINER_DIGEST', 'APPTAINER_CONTAINER']) expect(USAGE).toContain(variable);
  });

  test('errors name the option and say what is wrong', () => {
    expect(errorOf([])).toMatch(/--run-id: is required[\s\S]*--spool-dir: is required/);
    expect(errorOf(['--run-id', 'nope', '--spool-dir', 's'])).toContain('--run-id: must be the run id (a UUID)');
    expect(errorOf(['--run-id', RUN, '--spool-dir', 's', '--interval-ms', 'fast'])).toContain('--interval-ms: must be a number');
    expect(errorOf(['--run-id', RUN, '--spool-dir', 's', '--interval-ms', '1'])).toContain('--interval-ms: must be ≥ 10');
    expect(errorOf(['--run-id', RUN, '--spool-dir', 's', '--node', 'a/b'])).toContain('--node:');
    expect(errorOf(['--run-id', RUN, '--spool-dir', 's', '--sources', 'hwmon,gpu'])).toContain('--sources: expected "auto" or a comma-separated list');
    expect(errorOf(['--run-id', RUN, '--spool-dir', 's', '--api-url', 'http://x'])).toContain('--token-file: is required with --api-url');
    expect(errorOf(['--run-id', RUN, '--spool-dir', 's', '--api-url', 'ftp://x', '--token-file', 't'])).toContain('--api-url: must be an http(s) URL');
    expect(errorOf(['--run-id', RUN, '--spool-dir', 's', '--model-idle-w', '300', '--model-max-w', '200'])).toContain('--model-max-w: must be ≥ --model-idle-w');
    expect(errorOf(['--run-id', RUN, '--spool-dir', 's', '--log-level', 'loud'])).toContain('--log-level:');
    expect(errorOf(['--run-id', RUN, '--spool-dir', 's', '--bogus', '1'])).toContain("Unknown option '--bogus'");
  });
});
