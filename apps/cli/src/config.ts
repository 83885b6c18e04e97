// Where the CLI finds the API and its token. Everything it reads from the environment is parsed
// here, once, by `CliEnv`; commands get the result, never process.env.
//
// Each of the two settings (API URL, token) is taken from the first of these that has it:
//   1. the flags --api-url / --token;
//   2. the environment: ERG_API_URL / ERG_TOKEN;
//   3. the config file `erg login` writes: $ERG_CONFIG, else $XDG_CONFIG_HOME/erg/config.json,
//      else ~/.config/erg/config.json ({ "apiUrl": …, "token": … }, mode 600);
//   4. the local quickstart: a `.erg/token` file in the current folder or a parent, with the API
//      at http://127.0.0.1:8080 (what `npm run quickstart` sets up).
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { CliError, EXIT, usageError } from './errors';

/** An empty variable counts as unset, as shells make it easy to set one to "". */
const optionalVar = z.preprocess((v) => (v === '' ? undefined : v), z.string().optional());

/** The part of the environment the CLI reads. */
export const CliEnv = z.object({
  ERG_API_URL: optionalVar,
  ERG_TOKEN: optionalVar,
  ERG_CONFIG: optionalVar,
  XDG_CONFIG_HOME: optionalVar,
  HOME: optionalVar,
  // Not through optionalVar: NO_COLOR="" means "unset" by its own convention, FORCE_COLOR="" means "on".
  NO_COLOR: z.string().optional(),
  FORCE_COLOR: z.string().optional(),
});
export type CliEnv = z.infer<typeof CliEnv>;

export function parseCliEnv(env: NodeJS.ProcessEnv): CliEnv {
  return CliEnv.parse(env);
}

const ApiUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. http://127.0.0.1:8080' });
const Token = z.string().trim().min(1, 'must not be empty');

/** What `erg login` writes. */
export const ConfigFile = z.object({ apiUrl: ApiUrl, token: Token });
export type ConfigFile = z.infer<typeof ConfigFile>;

/** The API URL of the local quickstart (scripts/quickstart.sh starts the API there). */
export const QUICKSTART_API_URL = 'http://127.0.0.1:8080';

export type SettingSource = 'flag' | 'env' | 'config-file' | 'quickstart';

/** One resolved setting and where it came from, in words a person can act on. */
export interface Setting {
  value: string;
  source: SettingSource;
  origin: string;
}

export interface ResolvedConfig {
  apiUrl: Setting | null;
  token: Setting | null;
  /** The config file `erg login` reads and writes (whether or not it exists). */
  configFile: string;
  /** The quickstart's token file, when one was found above the current folder. */
  quickstartTokenFile: string | null;
}

export interface ConfigFlags {
  apiUrl?: string | undefined;
  token?: string | undefined;
}

/** The config file's path: $ERG_CONFIG, else $XDG_CONFIG_HOME/erg/config.json, else ~/.config/erg/config.json. */
export function configFilePath(env: CliEnv): string {
  if (env.ERG_CONFIG) return path.resolve(env.ERG_CONFIG);
  const base = env.XDG_CONFIG_HOME ?? path.join(env.HOME ?? os.homedir(), '.config');
  return path.join(base, 'erg', 'config.json');
}

/** The nearest `.erg/token` in `cwd` or a parent folder, or null. */
export function findQuickstartToken(cwd: string): string | null {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, '.erg', 'token');
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

/** Reads the config file; null when there is none, a CliError when it is unreadable or malformed. */
export function readConfigFile(file: string): ConfigFile | null {
  if (!existsSync(file)) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CliError(`the config file ${file} cannot be read: ${(err as Error).message}`, EXIT.UNDECIDED, { hint: 'run `erg login --api-url URL` to write it again, or delete it' });
  }
  const parsed = ConfigFile.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new CliError(`the config file ${file} is not valid: ${problems}`, EXIT.UNDECIDED, { hint: 'run `erg login --api-url URL` to write it again, or delete it' });
  }
  return parsed.data;
}

/** Checks a URL given on the command line or in ERG_API_URL. */
export function checkApiUrl(value: string, where: string): string {
  const parsed = ApiUrl.safeParse(value);
  if (!parsed.success) throw usageError(`${where} ${parsed.error.issues[0]?.message ?? 'is not valid'}; got ${JSON.stringify(value)}`);
  return parsed.data.replace(/\/+$/, '');
}

/** Resolves the API URL and the token by the precedence at the top of this file. */
export function resolveConfig(input: { flags: ConfigFlags; env: CliEnv; cwd: string }): ResolvedConfig {
  const { flags, env } = input;
  const configFile = configFilePath(env);
  const file = readConfigFile(configFile);
  const quickstartTokenFile = findQuickstartToken(input.cwd);
  const quickstartToken = quickstartTokenFile ? readFileSync(quickstartTokenFile, 'utf8').trim() : '';

  const first = (candidates: (Setting | null)[]): Setting | null => candidates.find((c) => c !== null) ?? null;
  const setting = (value: string | undefined, source: SettingSource, origin: string): Setting | null =>
    value === undefined || value === '' ? null : { value, source, origin };

  const apiUrl = first([
    setting(flags.apiUrl === undefined ? undefined : checkApiUrl(flags.apiUrl, '--api-url'), 'flag', '--api-url'),
    setting(env.ERG_API_URL === undefined ? undefined : checkApiUrl(env.ERG_API_URL, 'ERG_API_URL'), 'env', 'ERG_API_URL'),
    setting(file?.apiUrl.replace(/\/+$/, ''), 'config-file', `the config file ${configFile}`),
    quickstartToken ? setting(QUICKSTART_API_URL, 'quickstart', `the local quickstart (${quickstartTokenFile})`) : null,
  ]);
  const token = first([
    setting(flags.token?.trim(), 'flag', '--token'),
    setting(env.ERG_TOKEN?.trim(), 'env', 'ERG_TOKEN'),
    setting(file?.token, 'config-file', `the config file ${configFile}`),
    setting(quickstartToken, 'quickstart', `the local quickstart (${quickstartTokenFile})`),
  ]);
  return { apiUrl, token, configFile, quickstartTokenFile };
}

const SETUP_HINT =
  'run `erg login --api-url URL` (it reads the token from stdin and saves both), or set ERG_API_URL and ERG_TOKEN, ' +
  'or pass --api-url and --token; on a machine with the local quickstart, run erg inside the erg repository (it finds .erg/token)';

/** The URL and token a command needs, or a CliError that says exactly how to provide them. */
export function requireApi(config: ResolvedConfig): { apiUrl: Setting; token: Setting } {
  if (!config.apiUrl && !config.token) throw new CliError('no API configured: erg does not know where the API is', EXIT.UNDECIDED, { hint: SETUP_HINT });
  if (!config.apiUrl) throw new CliError(`no API URL configured (the token comes from ${config.token!.origin})`, EXIT.UNDECIDED, { hint: SETUP_HINT });
  if (!config.token) throw new CliError(`no token configured for the API at ${config.apiUrl.value} (from ${config.apiUrl.origin})`, EXIT.UNDECIDED, { hint: SETUP_HINT });
  return { apiUrl: config.apiUrl, token: config.token };
}

/** A token shown without giving it away: its prefix and last four characters. */
export function maskToken(token: string): string {
  if (token.length < 16) return '*'.repeat(token.length);
  return `${token.slice(0, 8)}…${token.slice(-4)}`;
}

/**
 * Writes the config file readable by its owner only (mode 600, folder 700). The file is written
 * beside its final name and renamed over it, so a crash never leaves half a token behind and an
 * older file with a wider mode is replaced, not reused.
 */
export function writeConfigFile(file: string, config: ConfigFile): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, JSON.stringify({ apiUrl: config.apiUrl, token: config.token }, null, 2) + '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
}
