// `erg report` against a real API (Postgres + Redis): an import campaign with known results —
// four configurations, three runs each, GPU power, PCIe traffic and phase marks — rendered as HTML
// and opened in Debian's Chromium (no request leaves the page, no console error, every figure
// there, every number in the figures' tables the results API's own), and as PDF through
// pdftoppm (pages of A4 size, none blank).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { computeDueEnergy, startTestApi, type TestApi } from '../../api/test/helpers';
import { erg, tempDir, type Handler } from './helpers';

const CHROMIUM = process.env.ERG_CHROMIUM ?? '/usr/bin/chromium';
const SPEC = { name: 'report', execution: 'import', repetitions: 3, parameters: { offload: ['none', 'cpu'], ckpt: [false, true] }, metrics: [], design: { order: 'randomized-blocks', seed: 4242 } };

/** Each configuration's run: window length (s) and GPU power (W); offloading is slower and more frugal, checkpointing slower still. */
function plan(parameters: { offload: string; ckpt: boolean }, repetition: number): { seconds: number; watts: number; pcie: number } {
  const seconds = 10 + (parameters.offload === 'cpu' ? 2 : 0) + (parameters.ckpt ? 1 : 0) + repetition * 0.2;
  const watts = 300 - (parameters.offload === 'cpu' ? 90 : 0) - (parameters.ckpt ? 10 : 0) + repetition * 3;
  return { seconds, watts, pcie: parameters.offload === 'cpu' ? 3e9 : 0.4e9 };
}

function fingerprint(node: string) {
  return {
    node, hostname: node, kernel: '6.1.0', arch: 'x86_64', cpuModel: null, cpuCount: 8, gpus: [], driverVersion: null, cudaVersion: null, nvmlVersion: null,
    slurmVersion: null, container: null, modules: [], workload: null, agentVersion: '0.1.0',
  };
}

/** Width, height and the share of pixels that are not white of a binary PGM (pdftoppm -gray). */
function pgmStats(file: string): { width: number; height: number; inked: number } {
  const bytes = readFileSync(file);
  const header = bytes.subarray(0, 64).toString('latin1').match(/^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/);
  if (!header) throw new Error(`${file} is not a binary PGM`);
  const [width, height] = [Number(header[1]), Number(header[2])];
  const pixels = bytes.subarray(header[0].length);
  let inked = 0;
  for (const p of pixels) if (p < 200) inked++;
  return { width, height, inked: inked / pixels.length };
}

describe('erg report: HTML in Chromium and PDF through pdftoppm (Postgres + Redis)', () => {
  let t: TestApi;
  let campaignId: string;
  let results: any;
  let browser: Browser;
  const dir = tempDir('erg-report-');

  /** The CLI's requests answered by the test API in-process. */
  const api: Handler = async (req) => {
    const query = req.query.toString();
    const res = await t.app.inject({ method: req.method as 'GET', url: `${req.path}${query ? `?${query}` : ''}`, headers: { authorization: `Bearer ${t.token}` } });
    return { status: res.statusCode, body: res.json() };
  };

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (scripts/test.sh does) or set ERG_CHROMIUM`);
    t = await startTestApi();
    const post = async (url: string, body: unknown) => {
      const res = await t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${t.token}` }, payload: body as object });
      if (res.statusCode >= 300) throw new Error(`POST ${url}: ${res.statusCode} ${res.body}`);
      return res.json();
    };
    const created = await post('/v1/campaigns', SPEC);
    campaignId = created.id;
    const parametersOf = new Map<string, { offload: string; ckpt: boolean }>(created.configurations.map((c: any) => [c.key, c.parameters]));
    const start = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
    for (const run of created.runs as { id: string; configurationKey: string; repetition: number }[]) {
      const { seconds, watts, pcie } = plan(parametersOf.get(run.configurationKey)!, run.repetition);
      const end = start + seconds * 1000;
      const ts: number[] = [];
      for (let ms = -1000; ms <= seconds * 1000 + 1000; ms += 100) ts.push(start + ms);
      // forward for the first 40 % of the window, backward for the rest, one node.
      const split = start + seconds * 400;
      const mark = (offset: number, kind: string, name: string, at: number) => ({ offset, kind, name, t: at, clock: 'wall', writer: 'py' });
      await post(`/v1/runs/${run.id}/telemetry`, {
        node: 'n1', seq: 0, fingerprint: fingerprint('n1'),
        samples: [
          { sensor: 'gpu0.power', t: ts, v: ts.map((x) => (x < split ? watts * 1.2 : watts * 0.8)) },
          { sensor: 'gpu0.util', t: ts, v: ts.map(() => 90) },
          { sensor: 'gpu0.pcie_tx', t: ts, v: ts.map(() => pcie) },
        ],
        marks: [mark(0, 'begin', 'forward', start), mark(40, 'end', 'forward', split), mark(80, 'begin', 'backward', split), mark(120, 'end', 'backward', end)],
      });
      await post(`/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(end).toISOString() });
    }
    await computeDueEnergy(t.db);
    results = (await api({ method: 'GET', path: `/v1/campaigns/${campaignId}/results`, query: new URLSearchParams(), headers: new Headers(), body: '' })).body;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  test('the known results have what every figure needs', () => {
    expect(results.configurations).toHaveLength(4);
    expect(results.configurations.every((c: any) => c.n === 3 && c.energyJ.ci95 !== null)).toBe(true);
    expect(results.phases.configurations).toHaveLength(4);
    expect(results.dataMovement.configurations).toHaveLength(4);
    expect(results.paretoFront.length).toBeGreaterThan(0);
  });

  test('HTML: one file that loads nothing, no console error, every figure, the numbers equal the results API', async () => {
    const out = path.join(dir, 'report.html');
    const cli = await erg(['report', campaignId, '--out', out], { api, cwd: dir });
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain(`study report of campaign ${campaignId} (HTML`);

    const page = await browser.newPage();
    const requests: string[] = [];
    const errors: string[] = [];
    page.on('request', (r) => void (r.url() === `file://${out}` || requests.push(r.url())));
    page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
    page.on('pageerror', (e) => void errors.push(e.message));
    await page.goto(`file://${out}`);
    expect(requests).toEqual([]);
    expect(errors).toEqual([]);

    expect(await page.locator('figure[data-figure]').evaluateAll((fs) => fs.map((f) => f.getAttribute('data-figure')))).toEqual(['pareto', 'phases', 'movement', 'effects']);
    for (const id of ['pareto', 'phases', 'movement', 'effects']) expect(await page.locator(`figure[data-figure="${id}"] svg`).count()).toBe(1);
    const captions = await page.locator('figure [data-caption]').allTextContents();
    expect(captions[0]).toContain('n = 3 runs per configuration');
    expect(captions[0]).toContain('95 % Student-t intervals');

    // The Pareto figure's table: one row per configuration, n, means and interval ends exactly the API's.
    const rows = await page.locator('table[data-table="pareto"] tbody tr').evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.getAttribute('data-value') ?? td.textContent)),
    );
    const expected = results.configurations.map((c: any) => [
      c.key, String(c.n), String(c.timeS.mean), String(c.timeS.ci95[0]), String(c.timeS.ci95[1]), String(c.energyJ.mean), String(c.energyJ.ci95[0]), String(c.energyJ.ci95[1]),
      results.paretoFront.includes(c.key) ? 'yes' : 'no',
    ]);
    // The first column labels the points: the keys themselves, four short ones.
    expect(rows.map((r) => r[0])).toEqual(results.configurations.map((c: any) => c.key));
    expect(rows.map((r) => r.slice(1))).toEqual(expected);
    // The plot marks exactly the front's members.
    expect((await page.locator('svg[data-figure-svg="pareto"] g[data-front="true"]').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-key')))).sort()).toEqual([...results.paretoFront].sort());

    // Energy by phase: every configuration's self energy per phase.
    const phaseValues = await page.locator('table[data-table="phases"] tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.children[1]!.textContent, tr.children[3]!.textContent, tr.children[4]!.getAttribute('data-value')]));
    const phaseOrder = results.configurations.map((c: any) => c.key);
    const apiPhases = [...results.phases.configurations]
      .sort((a: any, b: any) => phaseOrder.indexOf(a.key) - phaseOrder.indexOf(b.key))
      .flatMap((c: any) => c.phases.map((p: any) => [c.key, p.name, String(p.selfEnergyJ.mean)]));
    expect(phaseValues).toEqual(apiPhases);
    expect(apiPhases.map((p: string[]) => p[1])).toEqual(expect.arrayContaining(['forward', 'backward']));

    // Data movement: PCIe bytes per configuration.
    const movement = await page.locator('table[data-table="movement"] tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.children[2]!.textContent, tr.children[4]!.getAttribute('data-value')]));
    expect(movement).toEqual(results.dataMovement.configurations.map((c: any) => [c.key, String(c.kinds[0].bytes.mean)]));

    // Provenance: the run order's seed and the claims' confidence, as the API says.
    expect(results.design.seed).toBe(4242);
    expect(await page.locator('table[data-table="provenance"] td[data-value="4242"]').count()).toBe(1);
    expect(await page.locator('[data-section="validity"] [data-publishable]').textContent()).toBe(`publishable: ${results.validity.publishable ? 'yes' : 'no'} — ${results.validity.note}`);
    expect(JSON.parse((await page.locator('pre[data-spec]').textContent())!)).toMatchObject({ name: 'report', parameters: SPEC.parameters });
    await page.close();
  });

  test('PDF: printed by Chromium, A4 pages through pdftoppm, none blank', async () => {
    const out = path.join(dir, 'report.pdf');
    const cli = await erg(['report', campaignId, '--format', 'pdf', '--out', out], { api, cwd: dir, env: { ERG_CHROMIUM: CHROMIUM } });
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    expect(readFileSync(out).subarray(0, 5).toString()).toBe('%PDF-');
    const pages = mkdtempSync(path.join(tmpdir(), 'erg-report-pages-'));
    try {
      execFileSync('pdftoppm', ['-r', '30', '-gray', out, path.join(pages, 'page')]);
      const files = readdirSync(pages).sort();
      expect(files.length).toBeGreaterThanOrEqual(2);
      for (const file of files) {
        const { width, height, inked } = pgmStats(path.join(pages, file));
        // A4 at 30 dpi: 248 × 351 pixels.
        expect([width, height]).toEqual([248, 351]);
        expect(inked).toBeGreaterThan(0.002);
      }
    } finally {
      rmSync(pages, { recursive: true, force: true });
    }
  });

  test('PDF without a browser: a clear error before any request; HTML still works', async () => {
    const cli = await erg(['report', campaignId, '--format', 'pdf'], { api, cwd: dir, env: { PATH: dir } });
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain('no Chromium or Chrome found to print the PDF');
    expect(cli.stderr).toContain('--format html');
    expect(cli.requests).toEqual([]);
  });
});
