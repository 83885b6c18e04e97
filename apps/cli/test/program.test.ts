import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildProgram, EXIT, fromApiFailure, newOutput, type ExitCode } from '@erg/cli';
import { ANSI, CAMPAIGN_ID, erg, fakeRuntime, routes, RUN_ID, tempDir, type Handler } from './helpers';

const CLUSTER = {
  id: '5d0c9a7e-2f4b-4c1d-8e6a-1b3f5a7c9d21', name: 'local', host: '127.0.0.1', port: 2222, user: 'root', hostKeySha256: 'SHA256:' + 'A'.repeat(43),
  defaultPartition: 'gh200', workDir: '/var/lib/erg-local/work', agentCommand: 'node', agentApiUrl: null, modelIdleW: 60, modelMaxW: 250,
  lastError: null, lastContactAt: null, createdAt: '2026-11-30T03:00:00.000Z', powerHelper: '/usr/local/sbin/erg-power-helper',
  capabilities: { probedAt: '2026-11-30T03:00:05.000Z', slurmVersion: 'slurm 22.05.8', powerHelper: null, powerHelperProblem: 'no executable node helper at /usr/local/sbin/erg-power-helper on the login node (deploy/node-helper/install.sh installs it; docs/power-helper.md)' },
};
const CAMPAIGN = {
  id: CAMPAIGN_ID, name: 'sweep', cluster: 'local', state: 'running', runCounts: { completed: 3, queued: 4, pending: 1 }, totalRuns: 8,
  createdAt: '2026-11-30T11:58:00.000Z', cancelRequestedAt: null, design: { order: 'randomized-blocks', seed: 1234 },
  // Alice's token is named like a suite (before erg refused such names): it reads as a token, alice is the owner.
  owner: 'alice', createdBy: { user: { id: 'u1', name: 'alice' }, token: { id: 't1', name: 'suite:nightly' }, suite: null },
};
const run = (over: object) => ({ id: RUN_ID, configurationKey: 'a=1', parameters: { a: 1 }, repetition: 1, state: 'completed', slurmJobId: '42', exitCode: 0, reason: null, ...over });

/** Every command and subcommand, for the checks that apply to all of them. */
function allCommands(): string[][] {
  const { runtime } = fakeRuntime();
  const program = buildProgram(runtime);
  return program.commands.flatMap((c) => [[c.name()], ...c.commands.map((s) => [c.name(), s.name()])]).filter(([name]) => name !== 'help');
}

describe('help and usage errors', () => {
  test.each(allCommands())('erg %s %s --help shows an example and exits 0', async (...names) => {
    const out = await erg([...names.filter(Boolean), '--help']);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/Examples?:\n {2}erg /);
    expect(out.stderr).toBe('');
  });

  test('no arguments: the help on stderr, exit 2', async () => {
    const out = await erg([]);
    expect(out.code).toBe(2);
    expect(out.stdout).toBe('');
    expect(out.stderr).toContain('Usage: erg');
  });

  test.each([
    [['status'], /missing required argument 'campaign'/],
    [['status', CAMPAIGN_ID, '--bogus'], /unknown option '--bogus'/],
    [['stauts', CAMPAIGN_ID], /unknown command 'stauts'.*\n.*Did you mean status\?|unknown command 'stauts'/],
    [['status', 'not-a-uuid'], /not a campaign id \(expected a UUID/],
    [['logs', 'x'], /not a run id/],
    [['runs', CAMPAIGN_ID, '--state', 'done'], /expected one of pending, submitting/],
    [['watch', CAMPAIGN_ID, '--interval', '0'], /expected a number of seconds/],
    [['clusters', 'add', '--port', '99999'], /expected a port number/],
    [['clusters'], /Usage: erg clusters/],
  ])('erg %j is a usage error: exit 2, nothing requested', async (argv, message) => {
    const out = await erg(argv, { api: () => ({ status: 500 }) });
    expect(out.code).toBe(EXIT.UNDECIDED);
    expect(out.stderr).toMatch(message);
    expect(out.stdout).toBe('');
    expect(out.requests).toEqual([]);
  });

  test('--version', async () => {
    const out = await erg(['--version']);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  test('global flags work after the command too, and win over the environment', async () => {
    const out = await erg(['clusters', 'list', '--api-url', 'http://flag.test', '--token', 'erg_flag'], { api: routes({ 'GET /v1/clusters': { status: 200, body: { items: [] } } }) });
    expect(out.code).toBe(0);
    expect(out.requests[0]!.headers.get('authorization')).toBe('Bearer erg_flag');
  });
});

describe('API failures become exit codes with hints', () => {
  const failing = (status: number, body: unknown): Handler => () => ({ status, body });
  test.each<[string, Handler | undefined, ExitCode, RegExp]>([
    ['unreachable', undefined, 2, /cannot reach the API at http:\/\/api\.test \(ECONNREFUSED\)\nhint: is it running\? The URL came from ERG_API_URL/],
    ['401', failing(401, { error: { code: 'ERG_UNAUTHORIZED', message: 'missing or invalid bearer token' } }), 2, /authentication failed \(401 ERG_UNAUTHORIZED\).*\nhint: the token came from ERG_TOKEN; run `erg login/],
    ['404', failing(404, { error: { code: 'ERG_NOT_FOUND', message: `campaign "${CAMPAIGN_ID}" not found` } }), 2, /erg: campaign ".*" not found/],
    ['500', failing(500, { error: { code: 'ERG_INTERNAL', message: 'internal error; see the API log' } }), 2, /the API failed \(500 ERG_INTERNAL\)/],
    ['502 from a proxy', failing(502, '<html>bad gateway</html>'), 2, /the API failed \(502 ERG_HTTP_502\)/],
    ['400', failing(400, { error: { code: 'ERG_VALIDATION', message: 'invalid request params: id: bad', issues: [{ path: 'id', message: 'bad', code: 'x' }] } }), 1, /the API refused the request \(400 ERG_VALIDATION\): invalid request params\n {2}id: bad/],
  ])('%s', async (_, api, code, message) => {
    const out = await erg(['status', CAMPAIGN_ID], api ? { api } : {});
    expect(out.code).toBe(code);
    expect(out.stderr).toMatch(message);
    expect(out.stdout).toBe('');
  });
});

test('a request without an answer in time is "cannot reach" (exit 2), other errors pass through', () => {
  const target = { apiUrl: 'http://api.test', apiUrlSource: 'ERG_API_URL', tokenSource: 'ERG_TOKEN' };
  const timeout = fromApiFailure(new DOMException('The operation was aborted due to timeout', 'TimeoutError'), target);
  expect(timeout).toMatchObject({ exitCode: 2, message: 'cannot reach the API at http://api.test (no answer in time)' });
  const bug = new RangeError('a bug');
  expect(fromApiFailure(bug, target)).toBe(bug);
});

describe('clusters', () => {
  function clusterFiles(): { dir: string; file: string } {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'id_ed25519'), '-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n');
    const file = path.join(dir, 'cluster.json');
    writeFileSync(file, JSON.stringify({
      name: 'local', host: '127.0.0.1', port: 2222, user: 'root', privateKeyPath: path.join(dir, 'id_ed25519'),
      hostKeySha256: 'SHA256:' + 'A'.repeat(43), partition: 'gh200', workDir: '/var/lib/erg-local/work', slurmClusterName: 'erg-local',
    }));
    return { dir, file };
  }

  test('add --from: the body from the file, flags overriding, the key read from its file', async () => {
    const { file } = clusterFiles();
    const out = await erg(['clusters', 'add', '--from', file, '--name', 'other', '--agent-api-url', 'http://api.test'], { api: routes({ 'POST /v1/clusters': (req) => ({ status: 201, body: { ...CLUSTER, name: JSON.parse(req.body).name } }) }) });
    expect(out.code).toBe(0);
    const body = JSON.parse(out.requests[0]!.body);
    expect(body).toEqual({
      name: 'other', host: '127.0.0.1', port: 2222, user: 'root', privateKey: expect.stringContaining('BEGIN OPENSSH PRIVATE KEY'),
      hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/var/lib/erg-local/work', defaultPartition: 'gh200', agentApiUrl: 'http://api.test',
    });
    expect(out.stdout).toBe('Cluster other registered: root@127.0.0.1:2222, work dir /var/lib/erg-local/work\n');
  });

  test('an existing name: exit 1 with the hint to use --update, which does PUT', async () => {
    const { file } = clusterFiles();
    const api = routes({
      'POST /v1/clusters': { status: 409, body: { error: { code: 'ERG_CONFLICT', message: 'a cluster named "local" already exists; choose another name' } } },
      'PUT /v1/clusters/local': { status: 200, body: CLUSTER },
    });
    const conflict = await erg(['clusters', 'add', '--from', file], { api });
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toMatch(/a cluster named "local" already exists\nhint: to replace its settings, run the same command with --update/);
    const update = await erg(['clusters', 'add', '--from', file, '--update'], { api });
    expect(update.code).toBe(0);
    expect(update.requests[0]!.method).toBe('PUT');
    expect(JSON.parse(update.requests[0]!.body)).not.toHaveProperty('name');
  });

  test('refused fields name their flags; missing fields are a usage error before any request', async () => {
    const { file } = clusterFiles();
    const refuse = routes({ 'POST /v1/clusters': { status: 400, body: { error: { code: 'ERG_VALIDATION', message: 'invalid request body: hostKeySha256: bad', issues: [{ path: 'hostKeySha256', message: 'bad', code: 'invalid_format' }] } } } });
    const refused = await erg(['clusters', 'add', '--from', file, '--host-key', 'nope'], { api: refuse });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('hostKeySha256: bad (--host-key)');
    const missing = await erg(['clusters', 'add', '--name', 'x', '--host', 'h'], { api: refuse });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/missing --user, --key-file, --host-key, --work-dir/);
    expect(missing.requests).toEqual([]);
  });

  test('list and show: a table, or the JSON with --json', async () => {
    const gh = {
      ...CLUSTER, name: 'gh', capabilities: { probedAt: '2026-11-30T03:01:00.000Z', slurmVersion: 'slurm 23.11.4', powerHelper: { version: 1, knobs: ['gpuPowerLimitW', 'cpuFreqKHz'] }, powerHelperProblem: null },
    };
    const fresh = { ...CLUSTER, name: 'fresh', capabilities: null };
    const api = routes({ 'GET /v1/clusters': { status: 200, body: { items: [CLUSTER, gh, fresh] } }, 'GET /v1/clusters/local': { status: 200, body: CLUSTER }, 'GET /v1/clusters/gh': { status: 200, body: gh }, 'GET /v1/clusters/fresh': { status: 200, body: fresh } });
    const table = await erg(['clusters', 'list'], { api });
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+SSH\s+PARTITION\s+WORK DIR\s+SLURM\s+POWER HELPER\s+LAST CONTACT\s+STATUS$/);
    // The list says none; `clusters show` says why.
    expect(table.stdout).toMatch(/^local\s+root@127\.0\.0\.1:2222\s+gh200\s+\/var\/lib\/erg-local\/work\s+slurm 22\.05\.8\s+none\s+never\s+ok$/m);
    expect((await erg(['clusters', 'show', 'local'], { api })).stdout).toMatch(/none: no executable node helper at \/usr\/local\/sbin\/erg-power-helper on the login node/);
    expect(table.stdout).toMatch(/^gh\s+.*\s+slurm 23\.11\.4\s+version 1, knobs gpuPowerLimitW, cpuFreqKHz\s+never\s+ok$/m);
    expect(table.stdout).toMatch(/^fresh\s+.*\s+not probed yet\s+not probed yet\s+never\s+ok$/m);
    const show = (await erg(['clusters', 'show', 'gh'], { api })).stdout;
    expect(show).toMatch(/^Slurm {9}slurm 23\.11\.4$/m);
    expect(show).toMatch(/^Power helper {2}\/usr\/local\/sbin\/erg-power-helper: version 1, knobs gpuPowerLimitW, cpuFreqKHz$/m);
    expect(show).toMatch(/^Probed {8}2026-11-30T03:01:00\.000Z$/m);
    expect((await erg(['clusters', 'show', 'local'], { api })).stdout).toMatch(/^Power helper {2}\/usr\/local\/sbin\/erg-power-helper: none: no executable node helper at \/usr\/local\/sbin\/erg-power-helper on the login node \(deploy\/node-helper\/install\.sh installs it; docs\/power-helper\.md\)$/m);
    const unprobed = (await erg(['clusters', 'show', 'fresh'], { api })).stdout;
    expect(unprobed).toMatch(/^Slurm {9}not probed yet$/m);
    expect(unprobed).toMatch(/^Probed {8}not yet \(the scheduler probes a cluster when it first reaches it\)$/m);
    expect(JSON.parse((await erg(['clusters', 'list', '--json'], { api })).stdout)).toEqual({ items: [CLUSTER, gh, fresh] });
    expect(JSON.parse((await erg(['clusters', 'show', 'local', '--json'], { api })).stdout)).toEqual(CLUSTER);
    expect((await erg(['clusters', 'show', 'local'], { api })).stdout).toMatch(/^Host key\s+SHA256:A+$/m);
  });

  test("show says which runtime the agents start with and why (erg's staged one, or agentCommand), and before the probe that it is not known", async () => {
    const staged = {
      ...CLUSTER, name: 'gh', agentRuntime: 'auto', runtimeDir: '/scratch/erg/.erg/runtime',
      capabilities: {
        probedAt: '2026-11-30T03:01:00.000Z', slurmVersion: 'slurm 24.11.5', powerHelper: null, powerHelperProblem: 'none',
        agentRuntime: {
          use: 'staged', platform: 'linux-arm64', node: '22.23.5', reason: 'staged Node.js 22.23.5 linux-arm64: agentCommand `node` not found on gh-001 (exit 127)', problem: null,
          nodeArchs: [{ arch: 'aarch64', nodes: 4, example: 'gh-001' }],
        },
      },
    };
    const fresh = { ...CLUSTER, name: 'fresh', agentRuntime: 'staged', capabilities: null };
    const api = routes({ 'GET /v1/clusters/gh': { status: 200, body: staged }, 'GET /v1/clusters/fresh': { status: 200, body: fresh } });
    expect((await erg(['clusters', 'show', 'gh'], { api })).stdout).toMatch(
      /^Runtime {7}staged Node\.js 22\.23\.5 linux-arm64: agentCommand `node` not found on gh-001 \(exit 127\), in \/scratch\/erg\/\.erg\/runtime \(agentRuntime auto\)$/m,
    );
    expect((await erg(['clusters', 'show', 'fresh'], { api })).stdout).toMatch(/^Runtime {7}agentRuntime staged; not probed yet$/m);
  });
});

describe('submit', () => {
  const created = {
    ...CAMPAIGN, state: 'pending', runCounts: { pending: 8 },
    configurations: [1, 2, 3, 4].map((i) => ({ key: `i=${i}`, parameters: { i } })),
    runs: [],
  };

  test('sends the file as it is, YAML as application/yaml, and says how to follow the campaign', async () => {
    const dir = tempDir();
    const text = 'name: sweep   # a comment the API sees too\ncluster: local\nrepetitions: 2\nparameters: { i: [1, 2, 3, 4] }\nrun: echo {{i}}\n';
    writeFileSync(path.join(dir, 'spec.yml'), text);
    const out = await erg(['submit', 'spec.yml'], { cwd: dir, api: routes({ 'POST /v1/campaigns': { status: 201, body: created } }) });
    expect(out.code).toBe(0);
    expect(out.requests[0]!.headers.get('content-type')).toBe('application/yaml');
    expect(out.requests[0]!.body).toBe(text);
    expect(out.stdout).toContain(`Campaign sweep created: ${CAMPAIGN_ID}`);
    expect(out.stdout).toContain('4 configurations × 2 repetitions = 8 runs on cluster local\n  run order: randomized complete blocks, seed 1234\n');
    expect(out.stdout).toContain(`erg watch ${CAMPAIGN_ID}`);
    const quiet = await erg(['submit', '-q', 'spec.yml'], { cwd: dir, api: routes({ 'POST /v1/campaigns': { status: 201, body: created } }) });
    expect(quiet.stdout).toBe(`${CAMPAIGN_ID}\n`);
  });

  test('a search says its space and budget; an adaptive campaign its first runs', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'search.yml'), 'name: sweep\ncluster: local\nstrategy: { kind: search, budget: { maxRuns: 3 } }\nparameters: { i: [1, 2, 3, 4] }\nrun: echo {{i}}\n');
    const search = await erg(['submit', 'search.yml'], { cwd: dir, api: routes({ 'POST /v1/campaigns': { status: 201, body: { ...created, totalRuns: 0 } } }) });
    expect(search.stdout).toContain('a search of 4 configurations: at most 3 runs, proposed as results land on cluster local');
    writeFileSync(path.join(dir, 'adaptive.yml'), 'name: sweep\ncluster: local\nstrategy: adaptive\nparameters: { i: [1, 2, 3, 4] }\nrun: echo {{i}}\n');
    const adaptive = await erg(['submit', 'adaptive.yml'], { cwd: dir, api: routes({ 'POST /v1/campaigns': { status: 201, body: created } }) });
    expect(adaptive.stdout).toContain(`4 configurations: ${created.totalRuns} first runs; more only where they change a decision on cluster local`);
  });

  test('JSON files go as application/json; a refused spec lists every issue (exit 1)', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'spec.json'), '{"name":"x"}');
    const issues = [{ path: 'cluster', message: 'required when execution is "slurm"', code: 'required' }, { path: 'run', message: 'required', code: 'required' }];
    const out = await erg(['submit', 'spec.json'], { cwd: dir, api: routes({ 'POST /v1/campaigns': { status: 400, body: { error: { code: 'ERG_VALIDATION', message: 'invalid campaign spec: …', issues } } } }) });
    expect(out.requests[0]!.headers.get('content-type')).toBe('application/json');
    expect(out.code).toBe(1);
    expect(out.stderr).toBe('erg: spec.json was refused: it is not a valid campaign spec\n  cluster: required when execution is "slurm"\n  run: required\nhint: `erg validate spec.json` checks a spec without the API\n');
    expect(out.stdout).toBe('');
  });

  test('an unregistered cluster (422): exit 1 and how to register it', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'spec.json'), '{}');
    const body = { error: { code: 'ERG_UNKNOWN_CLUSTER', message: 'cluster "ghost" is not registered (registered: local); register it with POST /v1/clusters', issues: [{ path: 'cluster', message: 'cluster "ghost" is not registered', code: 'unknown_cluster' }] } };
    const out = await erg(['submit', 'spec.json'], { cwd: dir, api: routes({ 'POST /v1/campaigns': { status: 422, body } }) });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/cluster: cluster "ghost" is not registered\nhint: register the cluster first: erg clusters add/);
  });
});

describe('status, runs, logs, cancel', () => {
  const runs = [
    run({}),
    run({ id: 'r2', state: 'queued', slurmJobId: '43', exitCode: null, reason: 'Resources' }),
    run({ id: 'r3', state: 'queued', slurmJobId: '44', exitCode: null, reason: 'Resources' }),
    run({ id: 'r4', state: 'pending', slurmJobId: null, exitCode: null, reason: null }),
    run({ id: 'r5', state: 'failed', exitCode: 3, reason: 'the job exited with code 3' }),
  ];
  const api = routes({
    [`GET /v1/campaigns/${CAMPAIGN_ID}`]: { status: 200, body: { ...CAMPAIGN, spec: {} } },
    [`GET /v1/campaigns/${CAMPAIGN_ID}/runs`]: (req) => {
      const items = runs.filter((r) => !req.query.get('state') || r.state === req.query.get('state'));
      return { status: 200, body: { items, total: items.length } };
    },
    [`POST /v1/campaigns/${CAMPAIGN_ID}/cancel`]: {
      status: 202,
      body: { ...CAMPAIGN, state: 'cancelling', cancelRequestedAt: '2026-11-30T12:00:00.000Z', cancelling: { pending: 1, active: 4 } },
    },
  });

  test('status: state, counts, cluster, age and the waiting reasons grouped', async () => {
    const out = await erg(['status', CAMPAIGN_ID], { api });
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^State\s+running$/m);
    expect(out.stdout).toMatch(/^Runs\s+8: pending 1, queued 4, completed 3$/m);
    expect(out.stdout).toMatch(/^Created\s+2026-11-30T11:58:00\.000Z \(2 min 00 s ago\)$/m);
    expect(out.stdout).toMatch(/^Run order\s+randomized complete blocks, seed 1234$/m);
    expect(out.stdout).toMatch(/^Started by\s+alice \(token "suite:nightly"\)$/m);
    expect(out.stdout).toContain('Waiting:\n  2 runs queued: Resources\n  1 run pending: waiting for the scheduler to submit it\n');
    expect(JSON.parse((await erg(['status', CAMPAIGN_ID, '--json'], { api })).stdout)).toMatchObject({ id: CAMPAIGN_ID, spec: {} });
  });

  test('runs: a table, filtered by state', async () => {
    const out = await erg(['runs', CAMPAIGN_ID, '--state', 'failed'], { api });
    expect(out.requests[0]!.query.get('state')).toBe('failed');
    const lines = out.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^RUN\s+CONFIGURATION\s+REP\s+STATE\s+JOB\s+EXIT\s+REASON$/);
    expect(lines[1]).toMatch(/^r5\s+a=1\s+1\s+failed\s+42\s+3\s+the job exited with code 3$/);
    expect(lines).toHaveLength(2);
    expect(JSON.parse((await erg(['runs', CAMPAIGN_ID, '--json'], { api })).stdout).total).toBe(5);
  });

  test('campaigns: the newest first, as the API lists them', async () => {
    const list = routes({ 'GET /v1/campaigns': (req) => ({ status: 200, body: { items: [CAMPAIGN], next: req.query.get('limit') === '1' ? 'cursor' : null } }) });
    const out = await erg(['campaigns'], { api: list });
    expect(out.code).toBe(0);
    expect(out.requests[0]!.query.get('limit')).toBe('20');
    expect(out.stdout).toMatch(/^ID\s+NAME\s+CLUSTER\s+OWNER\s+STATE/m);
    expect(out.stdout).toMatch(new RegExp(`^${CAMPAIGN_ID}\\s+sweep\\s+local\\s+alice\\s+running\\s+8\\s+pending 1, queued 4, completed 3\\s+2026-11-30T11:58:00\\.000Z$`, 'm'));
    const one = await erg(['campaigns', '--limit', '1'], { api: list });
    expect(one.stderr).toMatch(/only the newest 1 are shown/);
    expect((await erg(['campaigns', '--limit', '0'], { api: list })).code).toBe(2);
  });

  test('cancel prints the resulting state', async () => {
    const out = await erg(['cancel', CAMPAIGN_ID], { api });
    expect(out.code).toBe(0);
    expect(out.requests[0]!.method).toBe('POST');
    expect(out.requests[0]!.headers.get('content-type')).toBeNull();
    expect(out.stdout).toMatch(/^Campaign sweep: cancelling \(/);
    // How many runs this cancels, and who cancels them.
    expect(out.stdout).toContain('cancelling 5 runs: 1 not yet submitted (by erg), 4 Slurm jobs (scancel on the scheduler\'s next cycle)');
  });

  test('logs: stdout, or stderr with --stderr', async () => {
    const logs = routes({ [`GET /v1/runs/${RUN_ID}/logs`]: { status: 200, body: { runId: RUN_ID, source: 'cluster', stdout: 'out\n', stderr: 'err\n', truncated: false } } });
    expect((await erg(['logs', RUN_ID], { api: logs })).stdout).toBe('out\n');
    expect((await erg(['logs', RUN_ID, '--stderr'], { api: logs })).stdout).toBe('err\n');
  });

  test('logs --follow prints only what is new, until the run finishes', async () => {
    const texts = ['', 'line 1\n', 'line 1\nline 2\n', 'line 1\nline 2\nline 3\n'];
    let poll = 0;
    const follow = routes({
      [`GET /v1/runs/${RUN_ID}`]: () => ({ status: 200, body: { ...run({}), state: poll >= 3 ? 'completed' : 'running' } }),
      [`GET /v1/runs/${RUN_ID}/logs`]: () => ({ status: 200, body: { runId: RUN_ID, source: 'cluster', stdout: texts[Math.min(poll++, 3)], stderr: '', truncated: false } }),
    });
    const out = await erg(['logs', RUN_ID, '--follow'], { api: follow });
    expect(out.code).toBe(0);
    expect(out.stdout).toBe('line 1\nline 2\nline 3\n');
    expect(out.stderr).toBe('run completed with exit code 0\n');
  });

  test('nothing is coloured when stdout is not a terminal', async () => {
    for (const argv of [['status', CAMPAIGN_ID], ['runs', CAMPAIGN_ID]]) expect((await erg(argv, { api })).stdout).not.toMatch(ANSI);
    expect((await erg(['runs', CAMPAIGN_ID], { api, tty: true })).stdout).toMatch(ANSI);
    expect((await erg(['runs', CAMPAIGN_ID, '--no-color'], { api, tty: true })).stdout).not.toMatch(ANSI);
    expect((await erg(['runs', CAMPAIGN_ID], { api, tty: true, env: { NO_COLOR: '1' } })).stdout).not.toMatch(ANSI);
    expect((await erg(['runs', CAMPAIGN_ID], { api, env: { FORCE_COLOR: '1' } })).stdout).toMatch(ANSI);
  });
});

describe('newOutput (logs --follow)', () => {
  test('appended text', () => expect(newOutput('a\n', 'a\nb\n')).toEqual({ text: 'b\n', skipped: false }));
  test('a tail whose start moved', () => expect(newOutput('1\n2\n3\n', '2\n3\n4\n')).toEqual({ text: '4\n', skipped: false }));
  test('more new output than one tail holds', () => expect(newOutput('1\n2\n', '7\n8\n')).toEqual({ text: '7\n8\n', skipped: true }));
  test('nothing printed yet', () => expect(newOutput('', 'x')).toEqual({ text: 'x', skipped: false }));
});
