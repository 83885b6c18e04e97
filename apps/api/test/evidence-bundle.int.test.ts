// The evidence bundle (issue 26 §6) end to end on Postgres: an import campaign measured through
// the API's telemetry and finish routes (two configurations × two repetitions, two nodes each,
// samples whose every digit counts, marks, a fingerprint, a cluster's carbon and price), exported
// through GET /v1/campaigns/:id/export by `erg export`, checked by `erg verify`, altered to see it
// fail, read back by an independent Parquet reader, and by Debian's python3-pandas through erg.py.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { tableFromIPC } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';
import { runCli, type CliRuntime } from '@erg/cli';
import { BUNDLE_FILES, campaignInputsWith, openEvidenceBundle, parseSamplesCsv, runFile, samplesFile } from '@erg/evidence';
import { readRunFigureInputs, runFiguresOf } from '@erg/results';
import { repoRoot } from '@erg/testkit';
import { apiRequests, computeDueEnergy, startTestApi, type TestApi } from './helpers';

const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'sec1', format: 'pem' }).toString();
const CLUSTER = {
  name: 'site', host: '127.0.0.1', port: 2222, user: 'root', privateKey: key, hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/var/lib/erg-test',
  carbon: { gCO2ePerKWh: 412.5, pue: 1.25 }, price: { perKWh: 0.31, currency: 'EUR' },
};
/** Debian's Python, where python3-pandas lives (scripts/test.sh installs it); the python3 first on PATH may be another. */
const DEBIAN_PYTHON = '/usr/bin/python3';
const ERG_PY_DIR = path.join(repoRoot(), 'apps', 'agent', 'marks');

const fingerprint = (node: string) => ({
  node, hostname: `${node}.site`, kernel: '6.8.0-1013-nvidia-64k', arch: 'arm64', cpuModel: 'ARM Neoverse-V2', cpuCount: 72,
  gpus: [{ index: 0, name: 'NVIDIA GH200 480GB', uuid: `GPU-${node}-0`, vbios: '96.00.9F.00.01' }],
  driverVersion: '550.54.15', cudaVersion: '12.4', nvmlVersion: '12.550.54.15', slurmVersion: 'slurm 24.11.5', container: null, modules: ['cuda/12.4'], workload: null, agentVersion: '0.1.0',
});

describe('evidence bundle: export, verify, read back (Postgres + Redis)', () => {
  let t: TestApi;
  let apiUrl: string;
  let dir: string;
  let campaignId: string;
  let bundleFile: string;
  const { call, ok } = apiRequests(() => t);

  /** Runs `erg` in-process against the test API, in `dir`. */
  async function erg(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const out = { stdout: '', stderr: '' };
    const runtime: CliRuntime = {
      stdout: { write: (s) => void (out.stdout += s), isTTY: false },
      stderr: { write: (s) => void (out.stderr += s), isTTY: false },
      readStdin: async () => '', stdinIsTTY: false, cwd: dir, now: () => Date.now(),
      env: { ERG_API_URL: apiUrl, ERG_TOKEN: t.token, HOME: dir, ERG_CONFIG: path.join(dir, 'config.json') },
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      onInterrupt: () => () => undefined,
    };
    const code = await runCli(args, runtime);
    return { code, ...out };
  }

  /** A bundle unpacked into a folder of its own, changed by `change`, and packed again (with the system's tar: any order of members). */
  function repacked(name: string, change: (root: string) => void): string {
    const root = path.join(dir, name);
    mkdirSync(root);
    execFileSync('tar', ['-xf', bundleFile, '-C', root]);
    change(root);
    const file = path.join(dir, `${name}.tar`);
    execFileSync('tar', ['-cf', file, '-C', root, '.']);
    return file;
  }
  const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
  /** Rewrites the manifest's sha256 and size of `member` to the file's own (an alteration made with care). */
  function rehash(root: string, member: string) {
    const manifestPath = path.join(root, BUNDLE_FILES.manifest);
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    const entry = manifest.files.find((f: { path: string }) => f.path === member);
    Object.assign(entry, { sha256: sha256(path.join(root, member)), bytes: statSync(path.join(root, member)).size });
    writeFileSync(manifestPath, JSON.stringify(manifest));
  }

  beforeAll(async () => {
    t = await startTestApi();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    apiUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    dir = mkdtempSync(path.join(tmpdir(), 'erg-evidence-int-'));
    await ok('POST', '/v1/clusters', CLUSTER);
    const created = await ok('POST', '/v1/campaigns', { name: 'evidence', execution: 'import', cluster: 'site', repetitions: 2, parameters: { cap: [200, 300] } });
    campaignId = created.id;
    let k = 0;
    for (const run of created.runs as { id: string; configurationKey: string }[]) {
      const cap = run.configurationKey === 'cap=200' ? 200 : 300;
      // Whole milliseconds: the window's edges fall on samples, so a trapezoid over the samples is erg's figure.
      const start = Date.UTC(2026, 10, 30, 9) + k * 60_000;
      const seconds = 10 + k;
      for (const node of ['n1', 'n2']) {
        const ts = Array.from({ length: seconds * 10 + 21 }, (_, i) => start - 1000 + i * 100);
        // Every digit counts: values with 17 significant digits.
        const power = (scale: number) => ts.map((_, i) => cap * scale + Math.sin(i + k) * 7.123456789012345 + i / 3);
        await ok('POST', `/v1/runs/${run.id}/telemetry`, {
          node, seq: 0,
          samples: [{ sensor: 'module0.power', t: ts, v: power(1.5) }, { sensor: 'gpu0.power', t: ts, v: power(1) }],
          sensors: [{ sensor: 'module0.power', source: 'import', unit: 'W' }, { sensor: 'gpu0.power', source: 'import', unit: 'W' }],
          fingerprint: fingerprint(node),
          ...(k === 0 && node === 'n1'
            ? { marks: [{ offset: 0, kind: 'begin', name: 'forward', t: start + 1500.25, clock: 'mono', writer: 'py' }, { offset: 31, kind: 'end', name: 'forward', t: start + 7250.5, clock: 'mono', writer: 'py' }] }
            : {}),
        });
      }
      await ok('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + seconds * 1000).toISOString(), metrics: { steps: 100 + k } });
      k++;
    }
    // The scheduler computes the finished runs' energy (called here as its job would).
    await computeDueEnergy(t.db);
    bundleFile = path.join(dir, 'bundle.tar');
    const exported = await erg('export', campaignId, '--output', 'bundle.tar');
    expect(exported).toMatchObject({ code: 0, stderr: '' });
    expect(exported.stdout).toContain(`bundle.tar: evidence bundle of campaign ${campaignId}`);
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the route answers a tar archive with a file name, under the results\' access rule (404 for a campaign there is not)', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/campaigns/${campaignId}/export`, headers: { authorization: `Bearer ${t.token}` } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-tar');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="erg-evidence-${campaignId}.tar"`);
    expect((await call('GET', '/v1/campaigns/00000000-0000-4000-8000-000000000000/export')).status).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `/v1/campaigns/${campaignId}/export` })).statusCode).toBe(401);
  });

  test('every file is in the manifest with its sha256 and size, as the system\'s tar unpacks them', () => {
    const root = path.join(dir, 'unpacked');
    mkdirSync(root);
    execFileSync('tar', ['-xf', bundleFile, '-C', root]);
    const manifest = JSON.parse(readFileSync(path.join(root, BUNDLE_FILES.manifest), 'utf8'));
    const files = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(d, e.name)) : [path.relative(root, path.join(d, e.name))]));
    expect(files(root).filter((f) => f !== BUNDLE_FILES.manifest).sort()).toEqual(manifest.files.map((f: { path: string }) => f.path).sort());
    for (const f of manifest.files) expect([f.path, sha256(path.join(root, f.path)), statSync(path.join(root, f.path)).size]).toEqual([f.path, f.sha256, f.bytes]);
    expect(manifest).toMatchObject({ format: 'erg-evidence/1', campaignId, ergVersion: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(manifest.runs).toHaveLength(4);
    expect(readFileSync(path.join(root, BUNDLE_FILES.specSubmitted), 'utf8')).toContain('"name": "evidence"');
  });

  test('erg verify: every hash holds and every figure recomputed equals the stored one (exit 0)', async () => {
    const verified = await erg('verify', 'bundle.tar');
    expect(verified).toMatchObject({ code: 0, stderr: '' });
    expect(verified.stdout).toContain('4 runs recomputed from their inputs and samples');
    expect(verified.stdout).toContain('verified: every file matches its sha256, and every figure recomputed from the bundle equals the stored one exactly');
  });

  test('the figures recomputed from the bundle are the routes\' exactly: each run\'s energy, and the results from the database\'s own reads', async () => {
    const bundle = await openEvidenceBundle(bundleFile);
    const figures = new Map();
    for (const runId of bundle.manifest.runs) {
      const { runId: _id, computedAt: _at, stale: _stale, cooldown: _cooldown, ...stored } = await ok('GET', `/v1/runs/${runId}/energy`);
      const recomputed = JSON.parse(JSON.stringify(runFiguresOf(bundle.runInputs(runId)!)));
      expect(recomputed).toEqual(stored);
      expect(recomputed.carbon.gCO2e).toBeGreaterThan(0); // the cluster's carbon and price travel in the inputs
      expect(recomputed.cost.currency).toBe('EUR');
      figures.set(runId, recomputed);
    }
    expect(bundle.json(BUNDLE_FILES.results)).toEqual(await ok('GET', `/v1/campaigns/${campaignId}/results`));
    // verify's reads of the recomputed figures (@erg/db's projection, counted-figures.ts) give the rows Postgres gave.
    const inputs = bundle.campaignInputs()!;
    const rebuilt = campaignInputsWith(inputs, figures);
    expect(rebuilt.rows).toEqual(inputs.rows);
    expect(rebuilt.phaseRows).toEqual(inputs.phaseRows);
    expect(rebuilt.phaseRows).toHaveLength(1);
    const run0 = bundle.json(runFile(bundle.manifest.runs[0]!, 'run')) as { position: number; events: { to: string }[]; nodes: { fingerprint: unknown }[] };
    expect(run0.position).toBe(0);
    expect(run0.events.map((e) => e.to)).toEqual(expect.arrayContaining(['completed']));
    expect(run0.nodes.map((n) => n.fingerprint)).toEqual([fingerprint('n1'), fingerprint('n2')]);
  });

  test('one sample flipped: verify names the file by its sha256, and once re-hashed, the run\'s energy and the results (exit 1)', async () => {
    const runId = JSON.parse(execFileSync('tar', ['-xOf', bundleFile, BUNDLE_FILES.manifest], { encoding: 'utf8' })).runs[1];
    const member = samplesFile(runId, 'n1');
    const flip = (root: string) => {
      const file = path.join(root, member);
      const lines = gunzipSync(readFileSync(file)).toString('utf8').split('\n');
      const at = lines.findIndex((l) => l.startsWith('module0.power,')) + 40;
      const [sensor, time, value] = lines[at]!.split(',');
      lines[at] = `${sensor},${time},${Number(value) + 0.5}`;
      writeFileSync(file, gzipSync(lines.join('\n')));
    };
    const unhashed = await erg('verify', path.basename(repacked('flipped', flip)));
    expect(unhashed.code).toBe(1);
    expect(unhashed.stdout).toMatch(new RegExp(`  ${member} sha256: stored [0-9a-f]{64} \\(\\d+ bytes\\), recomputed [0-9a-f]{64}`));
    const rehashed = await erg('verify', path.basename(repacked('flipped-rehashed', (root) => (flip(root), rehash(root, member)))));
    expect(rehashed.code).toBe(1);
    expect(rehashed.stdout).not.toContain('sha256: stored');
    expect(rehashed.stdout).toMatch(new RegExp(`  ${runFile(runId, 'energy')} energyJ: stored [0-9.e+-]+, recomputed [0-9.e+-]+\\n`));
    // The run's configuration's mean, wherever the run order put the run.
    const tarJson = (member: string) => JSON.parse(execFileSync('tar', ['-xOf', bundleFile, member], { encoding: 'utf8' }));
    const at = tarJson(BUNDLE_FILES.results).configurations.findIndex((c: { key: string }) => c.key === tarJson(runFile(runId, 'run')).configurationKey);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(rehashed.stdout).toMatch(new RegExp(` {2}results\\.json configurations\\[${at}\\]\\.energyJ\\.mean: stored `));
    expect(rehashed.stderr).toMatch(/does not verify: \d+ differences/);
  });

  test('one stored figure changed and re-hashed: verify names the run\'s file, the path, stored and recomputed (exit 1)', async () => {
    const runId = JSON.parse(execFileSync('tar', ['-xOf', bundleFile, BUNDLE_FILES.manifest], { encoding: 'utf8' })).runs[2];
    const member = runFile(runId, 'energy');
    let stored = 0;
    const changed = await erg('verify', path.basename(repacked('figure', (root) => {
      const energy = JSON.parse(readFileSync(path.join(root, member), 'utf8'));
      stored = energy.timeS;
      writeFileSync(path.join(root, member), JSON.stringify({ ...energy, timeS: energy.timeS * (1 + 1e-15) }));
      rehash(root, member);
    })));
    expect(changed.code).toBe(1);
    expect(changed.stdout).toContain(`  ${member} timeS: stored ${JSON.stringify(stored * (1 + 1e-15))}, recomputed ${JSON.stringify(stored)}\n`);
  });

  test('a file that is not a bundle: exit 2, saying so', async () => {
    writeFileSync(path.join(dir, 'not-a-bundle.tar'), 'hello\n'.repeat(200));
    const r = await erg('verify', 'not-a-bundle.tar');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not-a-bundle.tar cannot be read as an evidence bundle');
  });

  test('samples.parquet, read back by an independent reader (parquet-wasm: the Apache Arrow Rust parquet crate), holds every CSV sample exactly', async () => {
    const bundle = await openEvidenceBundle(bundleFile);
    const parquet = execFileSync('tar', ['-xOf', bundleFile, BUNDLE_FILES.samplesParquet], { maxBuffer: 64 * 1024 * 1024 });
    const table = tableFromIPC(readParquet(new Uint8Array(parquet)).intoIPCStream());
    const column = (name: string) => [...table.getChild(name)!] as unknown[];
    const [run, node, sensor, t, v] = ['run', 'node', 'sensor', 't', 'v'].map(column) as [string[], string[], string[], number[], number[]];
    const fromParquet = run.map((r, i) => `${r} ${node[i]} ${sensor[i]} ${t[i]} ${v[i]}`);
    const fromCsv: string[] = [];
    for (const runId of bundle.manifest.runs) {
      for (const n of ['n1', 'n2']) {
        for (const c of parseSamplesCsv(gunzipSync(bundle.members.get(samplesFile(runId, n))!.data!).toString('utf8'))) {
          c.t.forEach((time, i) => fromCsv.push(`${runId} ${n} ${c.sensor} ${time} ${c.v[i]}`));
        }
      }
    }
    // Four runs of 10-13 s, 10 samples a second and a second either side, two sensors on two nodes each.
    expect(fromParquet.length).toBe(4 * (121 + 131 + 141 + 151));
    // Numbers as text in the shortest form that parses back to them: equal text, equal doubles.
    expect(fromParquet.sort()).toEqual(fromCsv.sort());
  });

  test("Debian's python3-pandas reads the bundle through erg.py: its energy sums over the samples match each run's figures and the results", () => {
    const pandas = spawnSync(DEBIAN_PYTHON, ['-c', 'import pandas; print(pandas.__version__)'], { encoding: 'utf8' });
    // Never skipped: scripts/test.sh installs python3-pandas for the integration tests.
    expect({ status: pandas.status, stderr: pandas.stderr }).toEqual({ status: 0, stderr: '' });
    const script = `
import json, sys
sys.path.insert(0, ${JSON.stringify(ERG_PY_DIR)})
import erg, numpy
b = erg.open_bundle(sys.argv[1])
samples = b.samples()
out = {"runsType": type(b.runs).__name__, "samples": len(samples), "runs": {}, "configurations": {}}
for run_id, g in samples[samples.sensor == "module0.power"].groupby("run"):
    w = b.inputs(run_id)["window"]
    joules = 0.0
    for node, s in g.groupby("node"):
        s = s[(s.t >= w["startMs"]) & (s.t <= w["endMs"])].sort_values("t")
        joules += float(numpy.trapz(s.v.to_numpy(), s.t.to_numpy()) / 1000.0)
    out["runs"][run_id] = joules
runs = b.runs
for key, g in runs.groupby("configurationKey"):
    out["configurations"][key] = float(numpy.mean([out["runs"][r] for r in g.runId]))
out["stored"] = dict(zip(runs.runId, runs.energyJ))
out["plainSamples"] = len(erg.open_bundle(sys.argv[1], pandas=False).samples())
print(json.dumps(out))
`;
    const r = spawnSync(DEBIAN_PYTHON, ['-c', script, bundleFile], { encoding: 'utf8', timeout: 60_000 });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    const py = JSON.parse(r.stdout);
    expect(py.runsType).toBe('DataFrame');
    expect(py.samples).toBe(py.plainSamples);
    const results = JSON.parse(execFileSync('tar', ['-xOf', bundleFile, BUNDLE_FILES.results], { encoding: 'utf8' }));
    for (const [runId, joules] of Object.entries(py.runs as Record<string, number>)) {
      expect(Math.abs(joules - py.stored[runId]) / py.stored[runId]).toBeLessThan(1e-12);
    }
    expect(Object.keys(py.runs)).toHaveLength(4);
    for (const c of results.configurations as { key: string; energyJ: { mean: number } }[]) {
      expect(Math.abs(py.configurations[c.key] - c.energyJ.mean) / c.energyJ.mean).toBeLessThan(1e-12);
    }
  });

  // Last: it changes the cluster the other tests' bundle was written under.
  test("the cluster's carbon, price and intensity series changed after the figures were computed: a new bundle holds what they were computed from, and verifies", async () => {
    const { name: _name, ...rest } = CLUSTER;
    await ok('PUT', '/v1/clusters/site', { ...rest, carbon: { gCO2ePerKWh: 50, pue: 1.1 }, price: { perKWh: 0.9, currency: 'USD' } });
    await ok('PUT', '/v1/clusters/site/carbon-intensity', { points: [8, 9, 10].map((h) => ({ t: new Date(Date.UTC(2026, 10, 30, h)).toISOString(), gCO2ePerKWh: 100 * h })) });
    const runId = (await openEvidenceBundle(bundleFile)).manifest.runs[0]!;
    // Settings are not telemetry: the stored figures stay, not stale, and computed now they would differ.
    expect((await ok('GET', `/v1/runs/${runId}/energy`)).stale).toBe(false);
    const now = await readRunFigureInputs(t.db, runId);
    if (typeof now === 'string') throw new Error(now);
    expect(now.carbonIntensity).toHaveLength(3);
    expect(runFiguresOf(now)!.cost!.currency).toBe('USD');

    expect(await erg('export', campaignId, '--output', 'changed.tar')).toMatchObject({ code: 0, stderr: '' });
    const changed = await openEvidenceBundle(path.join(dir, 'changed.tar'));
    const inputs = changed.runInputs(runId)!;
    expect(inputs.cluster).toEqual({ carbon: CLUSTER.carbon, price: CLUSTER.price });
    expect(inputs.carbonIntensity).toEqual([]);
    const verified = await erg('verify', 'changed.tar');
    expect(verified).toMatchObject({ code: 0, stderr: '' });
    expect(verified.stdout).toContain('4 runs recomputed from their inputs and samples');
  });
});
