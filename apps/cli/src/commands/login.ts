// erg login (check a token and save it) and erg config / erg whoami (where the settings come from).
import type { Command } from 'commander';
import { checkApiUrl, configFilePath, maskToken, writeConfigFile, type Setting } from '../config';
import { createApi, type CommandContext } from '../context';
import { EXIT, usageError, type ExitCode } from '../errors';
import { renderFields } from '../output/table';
import { plural } from '@erg/format';
import { withExamples, type Act } from './register';

async function login(ctx: CommandContext): Promise<ExitCode> {
  const { apiUrl: urlFlag, token: tokenFlag } = ctx.options;
  if (urlFlag === undefined) throw usageError('erg login needs --api-url URL', 'e.g. erg login --api-url http://127.0.0.1:8080 < token.txt');
  const apiUrl = checkApiUrl(urlFlag, '--api-url');
  let token = tokenFlag?.trim();
  let tokenSource = '--token';
  if (token === undefined) {
    // Read from stdin so that the token does not end up in the shell's history.
    if (ctx.runtime.stdinIsTTY) ctx.stderr.write(`Paste the API token for ${apiUrl} and press Enter: `);
    token = (await ctx.runtime.readStdin()).split(/\r?\n/).find((line) => line.trim() !== '')?.trim();
    tokenSource = 'standard input';
  }
  if (!token) throw usageError('no token given', 'pipe it in (erg login --api-url URL < token.txt) or pass --token TOKEN');

  // An authenticated request proves both the URL and the token before anything is saved.
  const api = createApi({ baseUrl: apiUrl, token, apiUrlSource: '--api-url', tokenSource }, ctx.runtime.fetch);
  const clusters = await api.call((c) => c.GET('/v1/clusters'));
  const file = configFilePath(ctx.env);
  writeConfigFile(file, { apiUrl, token });
  ctx.stdout.write(`Logged in to ${apiUrl} (${plural(clusters.items.length, 'cluster')} registered); saved to ${file} (mode 600).\n`);
  for (const [name, value] of [['ERG_API_URL', ctx.env.ERG_API_URL], ['ERG_TOKEN', ctx.env.ERG_TOKEN]] as const) {
    if (value !== undefined) ctx.stderr.write(`note: ${name} is set in the environment and takes precedence over the saved file\n`);
  }
  return EXIT.OK;
}

function describe(setting: Setting | null, show: (value: string) => string): string {
  return setting === null ? 'not set' : `${show(setting.value)}  (from ${setting.origin})`;
}

async function showConfig(ctx: CommandContext, opts: { check?: boolean }): Promise<ExitCode> {
  const config = ctx.config();
  ctx.stdout.write(
    renderFields([
      ['API URL', describe(config.apiUrl, (v) => v)],
      ['Token', describe(config.token, maskToken)],
      ['Config file', `${config.configFile}${config.apiUrl?.source === 'config-file' || config.token?.source === 'config-file' ? '' : ' (not used)'}`],
      ['Quickstart token', config.quickstartTokenFile ?? 'none found above this folder'],
      ['Precedence', 'flags (--api-url, --token) > ERG_API_URL, ERG_TOKEN > config file > local quickstart (.erg/token)'],
    ]),
  );
  if (!config.apiUrl || !config.token) {
    ctx.connect(); // throws the CliError that says how to configure what is missing
  }
  if (opts.check) {
    const clusters = await ctx.connect().call((c) => c.GET('/v1/clusters'));
    ctx.stdout.write(`Check: the API accepted the token (${plural(clusters.items.length, 'cluster')} registered).\n`);
  }
  return EXIT.OK;
}

export function registerLogin(program: Command, act: Act): void {
  withExamples(
    program
      .command('login')
      .summary('check a token and save it with the API URL')
      .description('check a token against the API and save URL and token to the config file (mode 600); reads the token from stdin unless --token is given')
      .addHelpText('after', '\nThe config file is $ERG_CONFIG, else $XDG_CONFIG_HOME/erg/config.json, else ~/.config/erg/config.json.'),
    'erg login --api-url http://127.0.0.1:8080 < .erg/token',
    'erg login --api-url https://erg.example.org     (then paste the token)',
  ).action(act((ctx) => login(ctx)));
}

export function registerConfig(program: Command, act: Act): void {
  withExamples(
    program
      .command('config')
      .summary('show the API URL and token in use, and where they come from')
      .alias('whoami')
      .description('show which API URL and token erg uses and where each comes from (the token masked)')
      .option('--check', 'also check the token against the API'),
    'erg config',
    'erg whoami --check',
  ).action(act((ctx, cmd) => showConfig(ctx, cmd.opts())));
}
