import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CliError, configFilePath, maskToken, parseCliEnv, QUICKSTART_API_URL, requireApi, resolveConfig, writeConfigFile } from '@erg/cli';
import { erg, routes, tempDir } from './helpers';

const FILE_TOKEN = 'erg_from-the-config-file-0000000000';
const QUICK_TOKEN = 'erg_from-the-quickstart-00000000000';

/** A home with a config file and a project folder with a quickstart token two levels up. */
function setup(): { home: string; configFile: string; cwd: string; quickstart: string } {
  const root = tempDir();
  const home = path.join(root, 'home');
  const configFile = path.join(home, '.config', 'erg', 'config.json');
  writeConfigFile(configFile, { apiUrl: 'http://file.example:8080/', token: FILE_TOKEN });
  const project = path.join(root, 'project');
  mkdirSync(path.join(project, '.erg'), { recursive: true });
  const quickstart = path.join(project, '.erg', 'token');
  writeFileSync(quickstart, `${QUICK_TOKEN}\n`);
  const cwd = path.join(project, 'apps', 'cli');
  mkdirSync(cwd, { recursive: true });
  return { home, configFile, cwd, quickstart };
}

describe('configuration precedence', () => {
  test('flags win over the environment, which wins over the config file, which wins over the quickstart', () => {
    const { home, cwd, configFile, quickstart } = setup();
    const env = parseCliEnv({ HOME: home, ERG_API_URL: 'http://env.example', ERG_TOKEN: 'erg_env' });

    const flags = resolveConfig({ flags: { apiUrl: 'http://flag.example/', token: 'erg_flag' }, env, cwd });
    expect(flags.apiUrl).toMatchObject({ value: 'http://flag.example', source: 'flag' });
    expect(flags.token).toMatchObject({ value: 'erg_flag', source: 'flag' });

    const fromEnv = resolveConfig({ flags: {}, env, cwd });
    expect(fromEnv.apiUrl).toMatchObject({ value: 'http://env.example', source: 'env', origin: 'ERG_API_URL' });
    expect(fromEnv.token).toMatchObject({ value: 'erg_env', source: 'env' });

    const fromFile = resolveConfig({ flags: {}, env: parseCliEnv({ HOME: home }), cwd });
    expect(fromFile.apiUrl).toMatchObject({ value: 'http://file.example:8080', source: 'config-file' });
    expect(fromFile.token).toMatchObject({ value: FILE_TOKEN, source: 'config-file' });
    expect(fromFile.apiUrl!.origin).toContain(configFile);

    const quick = resolveConfig({ flags: {}, env: parseCliEnv({ HOME: path.join(home, 'nothing-here') }), cwd });
    expect(quick.apiUrl).toMatchObject({ value: QUICKSTART_API_URL, source: 'quickstart' });
    expect(quick.token).toMatchObject({ value: QUICK_TOKEN, source: 'quickstart' });
    expect(quick.quickstartTokenFile).toBe(quickstart);
  });

  test('each setting is resolved on its own: a flag URL with the token of the config file', () => {
    const { home, cwd } = setup();
    const config = resolveConfig({ flags: { apiUrl: 'https://other.example' }, env: parseCliEnv({ HOME: home }), cwd });
    expect(config.apiUrl).toMatchObject({ value: 'https://other.example', source: 'flag' });
    expect(config.token).toMatchObject({ value: FILE_TOKEN, source: 'config-file' });
  });

  test('the config file is $ERG_CONFIG, else $XDG_CONFIG_HOME/erg/config.json, else ~/.config/erg/config.json', () => {
    expect(configFilePath(parseCliEnv({ ERG_CONFIG: '/tmp/x/erg.json', XDG_CONFIG_HOME: '/xdg', HOME: '/home/a' }))).toBe('/tmp/x/erg.json');
    expect(configFilePath(parseCliEnv({ XDG_CONFIG_HOME: '/xdg', HOME: '/home/a' }))).toBe('/xdg/erg/config.json');
    expect(configFilePath(parseCliEnv({ HOME: '/home/a' }))).toBe('/home/a/.config/erg/config.json');
    expect(configFilePath(parseCliEnv({ HOME: '/home/a', XDG_CONFIG_HOME: '' }))).toBe('/home/a/.config/erg/config.json');
  });

  test('nothing configured: the error says exactly what to do', () => {
    const dir = tempDir();
    const config = resolveConfig({ flags: {}, env: parseCliEnv({ HOME: dir }), cwd: dir });
    expect(config.apiUrl).toBeNull();
    expect(() => requireApi(config)).toThrow(CliError);
    try {
      requireApi(config);
    } catch (err) {
      expect((err as CliError).exitCode).toBe(2);
      expect((err as CliError).hint).toMatch(/erg login --api-url URL/);
      expect((err as CliError).hint).toMatch(/ERG_API_URL and ERG_TOKEN/);
    }
  });

  test('a malformed config file or URL is an error naming it', () => {
    const dir = tempDir();
    const file = path.join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ apiUrl: 'ftp://nope', token: '' }));
    expect(() => resolveConfig({ flags: {}, env: parseCliEnv({ ERG_CONFIG: file }), cwd: dir })).toThrow(/config file .*config\.json is not valid: apiUrl: must be an http\(s\) URL.*token: must not be empty/);
    writeFileSync(file, '{');
    expect(() => resolveConfig({ flags: {}, env: parseCliEnv({ ERG_CONFIG: file }), cwd: dir })).toThrow(/cannot be read/);
    expect(() => resolveConfig({ flags: { apiUrl: 'localhost:8080' }, env: parseCliEnv({ HOME: dir }), cwd: dir })).toThrow(/--api-url must be an http\(s\) URL/);
  });

  test('tokens are masked', () => {
    expect(maskToken('erg_IhXqAbCdEfGhIjKlMnOpQrStUvWxYz0123456789n1WA')).toBe('erg_IhXq…n1WA');
    expect(maskToken('short')).toBe('*****');
  });

  test('the config file is written with mode 600 in a folder of mode 700, replacing a wider one', () => {
    const dir = tempDir();
    const file = path.join(dir, 'sub', 'config.json');
    mkdirSync(path.join(dir, 'sub'), { mode: 0o700 });
    writeFileSync(file, '{}', { mode: 0o644 });
    writeConfigFile(file, { apiUrl: 'http://a.example', token: 'erg_x' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ apiUrl: 'http://a.example', token: 'erg_x' });
  });
});

describe('erg login and erg config', () => {
  const api = routes({ 'GET /v1/clusters': { status: 200, body: { items: [] } } });

  test('login checks the token with an authenticated GET, then saves it (token read from stdin)', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'erg', 'config.json');
    const out = await erg(['login', '--api-url', 'http://api.test'], { env: { ERG_CONFIG: file, ERG_API_URL: '', ERG_TOKEN: '' }, stdin: '\n  erg_pasted-token-000000000000  \n', api });
    expect(out.code).toBe(0);
    expect(out.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/clusters']);
    expect(out.requests[0]!.headers.get('authorization')).toBe('Bearer erg_pasted-token-000000000000');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ apiUrl: 'http://api.test', token: 'erg_pasted-token-000000000000' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(out.stdout).toMatch(/Logged in to http:\/\/api\.test .*saved to .*config\.json \(mode 600\)/);

    const shown = await erg(['config'], { env: { ERG_CONFIG: file, ERG_API_URL: '', ERG_TOKEN: '' }, cwd: dir });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('http://api.test');
    expect(shown.stdout).toContain(`from the config file ${file}`);
    expect(shown.stdout).toContain('erg_past…0000');
    expect(shown.stdout).not.toContain('erg_pasted-token-000000000000');
  });

  test('a refused token is not saved (exit 2)', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'config.json');
    const refuse = routes({ 'GET /v1/clusters': { status: 401, body: { error: { code: 'ERG_UNAUTHORIZED', message: 'missing or invalid bearer token' } } } });
    const out = await erg(['login', '--api-url', 'http://api.test', '--token', 'erg_bad'], { env: { ERG_CONFIG: file }, api: refuse });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/authentication failed/);
    expect(() => statSync(file)).toThrow();
  });

  test('whoami with nothing configured: exit 2 and the instructions', async () => {
    const dir = tempDir();
    const out = await erg(['whoami'], { env: { ERG_API_URL: '', ERG_TOKEN: '', HOME: dir }, cwd: dir });
    expect(out.code).toBe(2);
    expect(out.stdout).toMatch(/API URL\s+not set/);
    expect(out.stderr).toMatch(/no API configured/);
    expect(out.stderr).toMatch(/erg login --api-url URL/);
  });

  test('config --check asks the API', async () => {
    const out = await erg(['config', '--check'], { api });
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/the API accepted the token \(0 clusters registered\)/);
  });
});
