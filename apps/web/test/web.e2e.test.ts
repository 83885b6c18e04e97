// The web app end to end: the built app (apps/web/dist) served by a harness API, driven in
// Debian's Chromium through playwright-core, against a campaign that really runs on the local
// Slurm cluster with live telemetry, an imported campaign whose runs marked phases (where the
// energy went), and one measured on a cluster with carbon and price settings whose runs moved data
// over PCIe and NVLink-C2C, and an adaptive campaign on the local cluster (its decisions).
// Screenshots of every page go to test-artifacts/web/.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { repoRoot, waitFor } from '@erg/testkit';
import { setRunWarnings } from '@erg/db/testing';
import { decodeCampaignText } from '@erg/spec';
import { formatJoulesPerGB, parseCsv } from '@erg/web';
import { Harness } from '../../scheduler/test/harness';

jest.setTimeout(240_000);

const CHROMIUM = process.env.ERG_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = path.join(repoRoot(), 'test-artifacts', 'web');

describe('web app on a live campaign', () => {
  const h = new Harness();
  const release = `/tmp/erg-web-e2e-release-${process.pid}-${Date.now()}`;
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  /** What Chromium refused under the app's Content-Security-Policy: must stay empty (afterEach). */
  const cspViolations: string[] = [];
  /** Until the scheduler has computed the finished runs' energy (POST /finish leaves it to it). */
  const energyComputed = (runs: readonly { id: string }[]) =>
    waitFor(async () => (await Promise.all(runs.map((r) => h.call('GET', `/v1/runs/${r.id}/energy`)))).every((res) => res.status === 200), {
      timeoutMs: 30_000, intervalMs: 100, what: "the scheduler to compute the finished runs' energy",
    });

  beforeAll(async () => {
    if (!existsSync(path.join(repoRoot(), 'apps', 'web', 'dist', 'index.html'))) throw new Error('apps/web/dist is missing: run npx turbo run build first');
    if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (scripts/test.sh does) or set ERG_CHROMIUM`);
    mkdirSync(ARTIFACTS, { recursive: true });
    await h.start();
    await h.registerCluster('local');
    await h.startInProcessScheduler();
    userDataDir = mkdtempSync(path.join(tmpdir(), 'erg-chromium-'));
    // A fresh profile per run (launchPersistentContext is how Playwright takes a user-data-dir).
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width: 1366, height: 768 },
      acceptDownloads: true,
    });
    page = context.pages()[0] ?? (await context.newPage());
    // Every refusal is reported twice: Chromium's console line, and the page's securitypolicyviolation
    // event (an init script, which Playwright injects outside the page's policy).
    await context.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => console.error(`securitypolicyviolation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'}`));
    });
    page.on('console', (m) => {
      if (/securitypolicyviolation|Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
  });

  afterEach(() => {
    expect(cspViolations.splice(0)).toEqual([]);
  });

  afterAll(async () => {
    // A test that failed before releasing its runs: let them end now (removed: nothing is left).
    await Promise.resolve().then(() => h.slurmLink().connection.exec(`touch ${release}; sleep 1; rm -f ${release}`)).catch(() => undefined);
    await context?.close().catch(() => undefined);
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await h.stop();
  });

  const shot = (name: string, fullPage = false) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage });

  test('sign in, watch the queue and a run live, then read the results', async () => {
    // The app is served at / without a token, with its security headers; a wrong token is refused on the form.
    const served = await page.goto(h.url + '/');
    const headers = served!.headers();
    expect(headers['content-security-policy']).toContain("default-src 'self'");
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('no-referrer');
    await page.getByLabel('API token').fill('erg_' + 'x'.repeat(43));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('refused this token').waitFor();
    await page.getByLabel('API token').fill(h.token);
    await shot('sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Queue' }).waitFor();
    await page.getByTestId('live-status').getByText('live').waitFor();
    // The watch on the policy sees refusals: an inline <style> (the app writes none) is refused and reported.
    await page.evaluate(() => document.head.append(Object.assign(document.createElement('style'), { textContent: 'body { margin: 0 }' })));
    // Both reports: Chromium's console line and the page's event.
    const reported = () => cspViolations.some((m) => m.startsWith('securitypolicyviolation: style-src')) && cspViolations.some((m) => /Content Security Policy/.test(m));
    await waitFor(reported, { timeoutMs: 10_000, intervalMs: 50, what: 'the refused inline style to be reported' });
    cspViolations.splice(0);

    // secs seconds of CPU work in `workers` processes, then idle until the test has watched a run
    // live and releases them (`release`, a file on the cluster; at most 2 minutes): on a loaded
    // machine the page can open later than a fixed-length run ends, and an ended run gains no points.
    const campaign = await h.submit({
      name: 'web-e2e', cluster: 'local', parameters: { workers: [1, 2], secs: [6, 8] },
      telemetry: { intervalMs: 200 },
      run: `for w in $(seq {{workers}}); do timeout {{secs}} sh -c "while :; do :; done" & done; wait; t=0; while [ ! -e ${release} ] && [ $t -lt 600 ]; do sleep 0.2; t=$((t+1)); done; echo done`,
    });

    // The queue shows the campaign's runs running, with a power figure (updated by `power` events).
    const runningRow = page.locator('[data-testid=queue-table] tr[data-state=running]').filter({ hasText: 'web-e2e' });
    await runningRow.first().waitFor({ timeout: 60_000 });
    await waitFor(async () => {
      const texts = await runningRow.locator('[data-testid=power]').allTextContents();
      return texts.some((t) => /\d W$/.test(t));
    }, { timeoutMs: 30_000, intervalMs: 250, what: 'a power figure in the queue view' });
    await shot('queue');

    // A running run's page: its power chart gains points while it runs.
    const rows = await runningRow.evaluateAll((trs) => trs.map((tr) => ({ id: tr.getAttribute('data-run')!, text: tr.textContent ?? '' })));
    const target = rows.find((r) => r.text.includes('secs=8')) ?? rows[0]!;
    await page.locator(`tr[data-run="${target.id}"] td:nth-child(2) a`).click();
    const chart = page.getByTestId('power-chart');
    await chart.waitFor({ timeout: 30_000 });
    const firstLast = Number(await chart.getAttribute('data-last-t'));
    const firstPoints = Number(await chart.getAttribute('data-points'));
    await waitFor(async () => Number(await chart.getAttribute('data-last-t')) > firstLast, { timeoutMs: 15_000, intervalMs: 200, what: 'new power points on the run page' });
    expect(Number(await chart.getAttribute('data-points'))).toBeGreaterThan(firstPoints);
    await h.slurmLink().connection.exec(`touch ${release}`);
    await page.getByTestId('job-script').waitFor();
    await shot('run-live', true);

    // The API restarts (a deploy, a crash) while the page is open: the app says it is reconnecting,
    // comes back by itself, and the run's end still reaches the open page without a reload.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { ergStatuses: string[] }).ergStatuses = seen;
      const el = document.querySelector('[data-testid=live-status]')!;
      new MutationObserver(() => seen.push(el.textContent ?? '')).observe(el, { childList: true, subtree: true, characterData: true });
    });
    await h.restartApi();
    await waitFor(
      async () => (await page.evaluate(() => (window as unknown as { ergStatuses: string[] }).ergStatuses)).some((t) => t.includes('reconnecting')),
      { timeoutMs: 15_000, intervalMs: 100, what: 'the app to show that it is reconnecting' },
    );
    await page.getByTestId('live-status').getByText('live').waitFor({ timeout: 30_000 });
    await page.getByTestId('run-state').getByText('completed').waitFor({ timeout: 60_000 });

    // The finished campaign: Pareto plot with the optima labelled in text, results CSV.
    await h.waitForCampaignEnd(campaign.id, 120_000);
    const api = await h.call('GET', `/v1/campaigns/${campaign.id}/results`);
    await page.goto(`${h.url}/#/campaigns/${campaign.id}`);
    await page.getByTestId('campaign-state').getByText('completed').waitFor({ timeout: 30_000 });
    const plot = page.getByTestId('pareto-plot');
    await plot.waitFor();
    const labels = (await plot.locator('text.optimal-label').allTextContents()).join(' · ');
    for (const l of ['fastest', 'least energy', 'lowest EDP']) expect(labels).toContain(l);
    expect(await plot.locator('g.point').count()).toBe(api.body.configurations.filter((c: { point: unknown }) => c.point).length);
    await page.getByTestId('components-chart').waitFor();
    // Whether erg set the power state, in the API's words, under the results table.
    expect(await page.getByTestId('power-note').textContent()).toBe(`Power state: ${api.body.power.note}`);
    // What the results claim, in the API's words (one repetition each: nothing can be told apart),
    // and each measured configuration's place on the front.
    const summary: string = api.body.claims.summary;
    expect(summary).toMatch(/^no distinguishable difference between the \d+ configurations at 95 %/);
    expect(await page.getByTestId('claims-summary').textContent()).toBe(`${summary[0]!.toUpperCase()}${summary.slice(1)}.`);
    expect(await page.getByTestId('pareto-claim').count()).toBe(api.body.claims.pareto.length);
    // Whether the results are publishable (every counted run passed the validity gates), in the API's words.
    expect(await page.getByTestId('publishable').textContent()).toBe(`publishable: ${api.body.validity.publishable ? 'yes' : 'no'} — ${api.body.validity.note}`);
    // The order its runs went to the cluster in, with the seed the API drew for it.
    expect(await page.getByTestId('run-order').textContent()).toBe(`randomized complete blocks, seed ${api.body.design.seed}`);
    await shot('campaign', true);

    // Plots export as SVG (the labels are in it) and as PNG (a real PNG file).
    const saved = async (button: string, name: string) => {
      const [d] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button }).click()]);
      const out = path.join(ARTIFACTS, name);
      await d.saveAs(out);
      return readFileSync(out);
    };
    const svg = (await saved('Export Pareto plot as SVG', 'pareto.svg')).toString('utf8');
    expect(svg).toMatch(/^(<\?xml[^>]*>\s*)?<svg[\s>]/);
    expect(svg).toContain('fastest');
    const png = await saved('Export Pareto plot as PNG', 'pareto.png');
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export results CSV' }).click()]);
    const file = path.join(ARTIFACTS, 'results.csv');
    await download.saveAs(file);
    const [header, ...body] = parseCsv(readFileSync(file, 'utf8'));
    const col = (name: string) => header!.indexOf(name);
    expect(body.map((r) => r[col('key')]).sort()).toEqual(api.body.configurations.map((c: { key: string }) => c.key).sort());
    for (const c of api.body.configurations) {
      const row = body.find((r) => r[col('key')] === c.key)!;
      expect(Number(row[col('energy_j')])).toBeCloseTo(c.energyJ.mean, 6);
      expect(Number(row[col('time_s')])).toBeCloseTo(c.timeS.mean, 6);
      expect(row[col('pareto')]).toBe(String(c.paretoOptimal));
      expect(row[col('best_time')]).toBe(String(api.body.best.time === c.key));
    }

    // The finished run: energy figures, workload window marked on the chart.
    await page.goto(`${h.url}/#/runs/${target.id}`);
    await page.getByTestId('energy-figures').waitFor({ timeout: 30_000 });
    await page.getByTestId('power-chart').waitFor();
    // What it was measured on (or that its agents said nothing), and Slurm's figure beside erg's.
    await page.locator('[data-testid=run-nodes], [data-testid=no-provenance]').first().waitFor();
    await page.getByTestId('slurm-energy').waitFor();
    // Its workload marked no phases: the page says how to.
    expect(await page.getByTestId('phases-hint').textContent()).toContain('erg-mark begin NAME');
    await shot('run', true);
    const powerSvg = (await saved('Export power plot as SVG', 'power.svg')).toString('utf8');
    expect(powerSvg).toContain('<svg');
    expect(powerSvg).toContain('cpu0.power');
    const powerPng = await saved('Export power plot as PNG', 'power.png');
    expect(powerPng.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');

    // What erg could not do in full for a run (here set by hand) is shown on its page.
    expect(await page.getByTestId('run-warnings').count()).toBe(0);
    await setRunWarnings(h.db, target.id, ['stdout.log is 300 MiB; metrics x were read from its last 256 MiB (ERG_METRIC_SCAN_BYTES)']);
    await page.reload();
    await page.getByTestId('run-warnings').waitFor({ timeout: 15_000 });
    expect(await page.getByTestId('run-warnings').textContent()).toContain('read from its last 256 MiB');

    // A token the API no longer accepts: any request returns to the sign-in form with a message.
    await page.evaluate(() => sessionStorage.setItem('erg.token', 'erg_' + 'y'.repeat(43)));
    await page.reload();
    await page.getByTestId('signin-message').waitFor({ timeout: 15_000 });
    expect(await page.evaluate(() => sessionStorage.getItem('erg.token'))).toBeNull();
  });

  test('where the energy went: phase bands, the per-phase table, energy by phase and the comparison, axes from 0', async () => {
    // Imported runs (execution: import): telemetry and marks posted as an agent would, then finished,
    // which computes their energy and phases. Two shapes: `wide` is fast on 2 nodes at high power,
    // `narrow` slow on 1 node at low power, so the fastest is not the most frugal; wide's two
    // repetitions differ (×1 and ×0.8 power), so its 95 % energy interval (n = 2) reaches below 0.
    const created = await h.call('POST', '/v1/campaigns', { name: 'web-e2e-phases', execution: 'import', repetitions: 2, parameters: { shape: ['wide', 'narrow'] } });
    expect(created.status).toBe(201);
    type Stretch = [name: string | null, fromS: number, toS: number, watts: number];
    const shapes: Record<string, { nodes: string[]; endS: number; stretches: Stretch[] }> = {
      wide: { nodes: ['n1', 'n2'], endS: 10, stretches: [[null, 0, 1, 100], ['load', 1, 3, 150], ['train', 3, 6, 300], ['optimizer', 6, 7, 350], ['train', 7, 9, 300], ['save', 9, 9.5, 120], [null, 9.5, 10, 100]] },
      narrow: { nodes: ['n1'], endS: 16, stretches: [[null, 0, 1, 100], ['load', 1, 3, 150], ['train', 3, 9, 200], ['optimizer', 9, 10, 220], ['train', 10, 14, 200], ['save', 14, 15, 120], [null, 15, 16, 100]] },
    };
    // Marks: begin/end of each phase (optimizer nested in train) and a step of train every second.
    const marksOf = (stretches: Stretch[]) => {
      const at = (name: string) => stretches.filter((x) => x[0] === name);
      const trainFrom = at('train')[0]![1], trainTo = at('train').at(-1)![2];
      const events: [number, 'begin' | 'end' | 'step', string][] = [
        [at('load')[0]![1], 'begin', 'load'], [at('load')[0]![2], 'end', 'load'],
        [trainFrom, 'begin', 'train'], [at('optimizer')[0]![1], 'begin', 'optimizer'], [at('optimizer')[0]![2], 'end', 'optimizer'], [trainTo, 'end', 'train'],
        [at('save')[0]![1], 'begin', 'save'], [at('save')[0]![2], 'end', 'save'],
      ];
      for (let t = trainFrom + 1; t <= trainTo; t++) events.push([t, 'step', 'step']);
      // At one moment, the phase that ends before the one that begins.
      events.sort((a, b) => a[0] - b[0] || (a[1] === 'end' ? -1 : b[1] === 'end' ? 1 : 0));
      return events;
    };
    const start = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
    for (const run of created.body.runs as { id: string; configurationKey: string; repetition: number }[]) {
      const shape = shapes[run.configurationKey.replace('shape=', '')]!;
      const scale = run.configurationKey === 'shape=wide' && run.repetition === 2 ? 0.8 : 1;
      const wattsAt = (s: number) => (shape.stretches.find(([, from, to]) => s >= from && s < to)?.[3] ?? 100) * scale;
      const t = Array.from({ length: shape.endS * 10 + 21 }, (_, k) => start - 1000 + k * 100);
      for (const node of shape.nodes) {
        const marks = marksOf(shape.stretches).map(([s, kind, name], i) => ({ offset: i * 64, kind, name, t: start + s * 1000, clock: 'wall', writer: 'py' }));
        const posted = await h.call('POST', `/v1/runs/${run.id}/telemetry`, { node, seq: 0, samples: [{ sensor: 'gpu0.power', t, v: t.map((x) => wattsAt((x - start) / 1000)) }], marks });
        expect(posted.status).toBe(200);
      }
      const finished = await h.call('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + shape.endS * 1000).toISOString(), exitCode: 0 });
      expect(finished.status).toBe(202);
    }
    await energyComputed(created.body.runs);
    const api = await h.call('GET', `/v1/campaigns/${created.body.id}/results`);
    expect(api.body.best).toMatchObject({ time: 'shape=wide', energy: 'shape=narrow' });
    expect(api.body.phases.comparison).toMatchObject({ runtimeOptimal: 'shape=wide', energyOptimal: 'shape=narrow' });

    // Signed in afresh (the test before ends signed out).
    await page.goto(h.url + '/');
    await page.getByLabel('API token').fill(h.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Queue' }).waitFor();

    // The campaign: self energy by phase stacked per configuration, the unmarked time on top.
    await page.goto(`${h.url}/#/campaigns/${created.body.id}`);
    const stacks = page.getByTestId('phases-chart');
    await stacks.waitFor({ timeout: 30_000 });
    expect(await stacks.locator('g.bar').count()).toBe(2);
    expect(await stacks.locator('g.legend-entry').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-kind')))).toEqual(['load', 'optimizer', 'save', 'train', '(unmarked)']);
    const wideStack = await stacks.locator('g.bar[data-key="shape=wide"] rect.segment').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-kind')));
    expect(wideStack.at(-1)).toBe('(unmarked)');
    // Where the energy went: train explains most of what the fastest spends beyond the most frugal.
    const comparison = page.getByTestId('phase-comparison');
    const rows = await comparison.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-phase')));
    expect(rows[0]).toBe(api.body.phases.comparison.phases[0].name);
    expect([...rows].sort()).toEqual(['(unmarked)', 'load', 'optimizer', 'save', 'train']);
    expect(await page.getByTestId('comparison-summary').textContent()).toContain('shape=narrow');
    // No axis below 0, though wide's energy interval reaches there: it ends in an arrow at the axis.
    const pareto = page.getByTestId('pareto-plot');
    const tickTexts = [...await pareto.locator('text.tick').allTextContents(), ...await stacks.locator('text.tick').allTextContents()];
    expect(tickTexts.length).toBeGreaterThan(4);
    for (const text of tickTexts) expect(text).not.toMatch(/^[-−]/);
    expect(await pareto.locator('g.point[data-key="shape=wide"] path.clipped').count()).toBe(1);
    await shot('campaign-phases', true);
    // Printed (print media: the browser's Print, or the page's Print / PDF button), the page is the
    // report's sections without the app's chrome or buttons, and Chromium prints it to PDF.
    expect(await page.getByTestId('print').isVisible()).toBe(true);
    await page.emulateMedia({ media: 'print' });
    expect(await page.locator('header.top').isVisible()).toBe(false);
    expect(await page.getByTestId('print').isVisible()).toBe(false);
    expect(await stacks.isVisible()).toBe(true);
    expect(await pareto.isVisible()).toBe(true);
    expect((await page.pdf({ format: 'A4' })).subarray(0, 5).toString()).toBe('%PDF-');
    await page.emulateMedia({ media: 'screen' });

    // A run on two nodes: its phases as bands over the power trace, one lane per node, named in the legend.
    const wide = (created.body.runs as { id: string; configurationKey: string; repetition: number }[]).find((r) => r.configurationKey === 'shape=wide' && r.repetition === 1)!;
    await page.goto(`${h.url}/#/runs/${wide.id}`);
    const chart = page.getByTestId('power-chart');
    await chart.waitFor({ timeout: 30_000 });
    await waitFor(async () => (await chart.getAttribute('data-phase-lanes')) === '2', { timeoutMs: 15_000, intervalMs: 200, what: 'two lanes of phase bands' });
    await waitFor(async () => Number(await chart.getAttribute('data-phase-bands-drawn')) > 0, { timeoutMs: 15_000, intervalMs: 200, what: 'phase bands drawn on the trace' });
    // 2 nodes × load, train, optimizer, train, save.
    expect(Number(await chart.getAttribute('data-phase-bands-drawn'))).toBe(10);
    const legend = page.getByTestId('phase-legend');
    expect(await legend.locator('[data-phase]').evaluateAll((es) => es.map((e) => e.getAttribute('data-phase')))).toEqual(['load', 'optimizer', 'save', 'train', '(unmarked)']);
    // The per-phase table (every phase, the unmarked time last) and the energy per step.
    const table = page.getByTestId('phase-table');
    const phaseNames = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-phase')));
    expect(phaseNames.at(-1)).toBe('(unmarked)');
    expect([...phaseNames].sort()).toEqual(['(unmarked)', 'load', 'optimizer', 'save', 'train']);
    expect(await table.locator('tr[data-phase=train]').textContent()).toMatch(/kJ/);
    expect(await page.getByTestId('step-table').locator('tr[data-step=step]').count()).toBe(1);
    expect(await page.getByTestId('phases-hint').count()).toBe(0);
    await shot('run-phases', true);
    const [d] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export power plot as SVG' }).click()]);
    const out = path.join(ARTIFACTS, 'power-phases.svg');
    await d.saveAs(out);
    const svg = readFileSync(out, 'utf8');
    expect(svg.match(/class="phase-band"/g)).toHaveLength(10);
    expect(svg).toContain('>optimizer<');
  });

  test('data movement, carbon and cost: bytes against energy per kind of link, the footprint columns, the Pareto plot on time × carbon, a run\'s sections', async () => {
    // A cluster with a grid intensity, a PUE and a price (the local cluster's connection under
    // another name); the import campaign names it, so its runs get carbon and cost.
    const l = h.local;
    const grid = await h.call('PUT', '/v1/clusters/web-grid', {
      host: l.host, port: l.port, user: l.user, privateKey: l.privateKey, hostKeySha256: l.hostKeySha256, defaultPartition: l.partition, workDir: h.workDir, agentApiUrl: h.url,
      carbon: { gCO2ePerKWh: 400, pue: 1.5 }, price: { perNodeHour: 2, perKWh: 0.25, currency: 'EUR' },
    });
    expect(grid.status).toBe(200);
    const created = await h.call('POST', '/v1/campaigns', { name: 'web-e2e-movement', execution: 'import', cluster: 'web-grid', repetitions: 2, parameters: { offload: ['cpu', 'none'] } });
    expect(created.status).toBe(201);
    // offload=cpu: fast (10 s at 300 W), 2 GB/s over PCIe and 1 GB/s over C2C; offload=none: slow
    // (16 s at 150 W), 0.5 GB/s over PCIe and 4 GB/s over C2C. So the fastest is not the least
    // energy (nor the least carbon), and the two kinds order the configurations oppositely.
    // Each run marks a phase `train` from 1 s to 1 s before its end.
    const shapes: Record<string, { endS: number; watts: number; pcie: number; c2c: number }> = {
      'offload=cpu': { endS: 10, watts: 300, pcie: 2e9, c2c: 1e9 },
      'offload=none': { endS: 16, watts: 150, pcie: 0.5e9, c2c: 4e9 },
    };
    const start = Math.floor(Date.now() / 1000) * 1000 - 1_800_000;
    const runs = created.body.runs as { id: string; configurationKey: string; repetition: number }[];
    for (const run of runs) {
      const shape = shapes[run.configurationKey]!;
      // The second repetition a little different, so each mean has a 95 % interval.
      const scale = run.repetition === 2 ? 0.9 : 1;
      const t = Array.from({ length: shape.endS * 10 + 21 }, (_, k) => start - 1000 + k * 100);
      const series = (sensor: string, v: number) => ({ sensor, t, v: t.map(() => v * scale) });
      const marks = [
        { offset: 0, kind: 'begin', name: 'train', t: start + 1000, clock: 'wall', writer: 'py' },
        { offset: 64, kind: 'end', name: 'train', t: start + (shape.endS - 1) * 1000, clock: 'wall', writer: 'py' },
      ];
      const samples = [series('gpu0.power', shape.watts), series('gpu0.util', 95), series('gpu0.pcie_tx', shape.pcie), series('gpu0.c2c_rx', shape.c2c)];
      const posted = await h.call('POST', `/v1/runs/${run.id}/telemetry`, { node: 'n1', seq: 0, samples, marks });
      expect(posted.status).toBe(200);
      const finished = await h.call('POST', `/v1/runs/${run.id}/finish`, { startedAt: new Date(start).toISOString(), endedAt: new Date(start + shape.endS * 1000).toISOString(), exitCode: 0 });
      expect(finished.status).toBe(202);
    }
    await energyComputed(runs);
    const api = (await h.call('GET', `/v1/campaigns/${created.body.id}/results`)).body;
    expect(api.best).toMatchObject({ time: 'offload=cpu', energy: 'offload=none', carbon: 'offload=none' });
    expect(api.currency).toBe('EUR');
    expect(api.dataMovement.configurations.map((c: { kinds: { kind: string }[] }) => c.kinds.map((k) => k.kind))).toEqual([['pcie', 'c2c'], ['pcie', 'c2c']]);
    const onCarbon = (await h.call('GET', `/v1/campaigns/${created.body.id}/results?objectives=time,carbon`)).body;
    expect(onCarbon.paretoFront.sort()).toEqual(['offload=cpu', 'offload=none']);

    // Signed in (the token in the tab's session, as the form leaves it; read when the app starts).
    await page.goto(h.url + '/');
    await page.evaluate((token) => sessionStorage.setItem('erg.token', token), h.token);
    await page.reload();
    await page.getByRole('heading', { name: 'Queue' }).waitFor();
    await page.goto(`${h.url}/#/campaigns/${created.body.id}`);

    // Bytes against energy: one point per configuration, the fastest and the least energy labelled.
    const scatter = page.getByTestId('movement-scatter');
    await scatter.waitFor({ timeout: 30_000 });
    const kind = page.getByTestId('movement-kind');
    expect(await kind.locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual(['pcie', 'c2c']);
    expect(await scatter.locator('g.point').count()).toBe(2);
    const xOf = async (key: string) => Number(await scatter.locator(`g.point[data-key="${key}"]`).getAttribute('data-x'));
    const pcieX = { cpu: await xOf('offload=cpu'), none: await xOf('offload=none') };
    expect(pcieX.cpu).toBeGreaterThan(pcieX.none);
    expect((await scatter.locator('text.optimal-label').allTextContents()).sort()).toEqual(['fastest', 'least energy']);
    expect(await scatter.locator('text.x-label').textContent()).toBe('mean bytes per run over PCIe (GB)');
    for (const text of await scatter.locator('text.tick').allTextContents()) expect(text).not.toMatch(/^[-−]/);
    await shot('campaign-movement', true);
    // Over NVLink-C2C the configurations swap sides.
    await kind.selectOption('c2c');
    await waitFor(async () => (await scatter.getAttribute('data-kind')) === 'c2c', { timeoutMs: 10_000, intervalMs: 100, what: 'the scatter to show NVLink-C2C' });
    expect(await scatter.locator('g.point').count()).toBe(2);
    expect(await xOf('offload=cpu')).toBeLessThan(await xOf('offload=none'));
    expect(await xOf('offload=cpu')).not.toBe(pcieX.cpu);
    expect(await scatter.locator('text.x-label').textContent()).toBe('mean bytes per run over NVLink-C2C (GB)');

    // The table: J per GB per kind, as the API's figure reads, and the transfer overlap.
    const table = page.getByTestId('movement-table');
    for (const c of api.dataMovement.configurations as { key: string; kinds: { kind: string; joulesPerGB: { mean: number } }[] }[]) {
      for (const k of c.kinds) {
        expect(await table.locator(`tr[data-key="${c.key}"] td[data-kind=${k.kind}][data-figure=joules-per-gb]`).textContent()).toBe(formatJoulesPerGB(k.joulesPerGB.mean));
      }
      expect(await table.locator(`tr[data-key="${c.key}"] td[data-figure=overlap]`).textContent()).toMatch(/^\d+\.\d %$/);
    }

    // Carbon and cost per run in the results table.
    const results = page.getByTestId('results-table');
    expect(await results.locator('th[data-column=carbon]').textContent()).toContain('Carbon per run');
    expect(await results.locator('th[data-column=cost]').textContent()).toContain('EUR');
    expect(await results.locator('tr[data-key="offload=cpu"] td[data-column=carbon]').textContent()).toMatch(/gCO₂e ± /);
    expect(await results.locator('tr[data-key="offload=none"] td[data-column=cost]').textContent()).toMatch(/EUR ± /);

    // The Pareto plot on time × carbon: refetched on those objectives, redrawn with carbon on y.
    const pareto = page.getByTestId('pareto-plot');
    expect(await pareto.getAttribute('data-objectives')).toBe('time,energy');
    expect(await page.getByTestId('objective-y').locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual(['time', 'energy', 'edp', 'carbon', 'cost']);
    await page.getByTestId('objective-y').selectOption('carbon');
    await waitFor(async () => (await pareto.getAttribute('data-objectives')) === 'time,carbon', { timeoutMs: 15_000, intervalMs: 100, what: 'the Pareto plot on time and carbon' });
    expect(await pareto.locator('text.y-label').textContent()).toBe('mean carbon per run (gCO₂e)');
    expect(await pareto.locator('text.x-label').textContent()).toBe('mean time to solution (s)');
    const yTicks = await pareto.locator('text.y-tick').allTextContents();
    expect(yTicks.length).toBeGreaterThan(2);
    for (const text of yTicks) expect(text).toMatch(/^\d[\d.]* [mk]?gCO₂e$/);
    for (const text of await pareto.locator('text.tick').allTextContents()) expect(text).not.toMatch(/^[-−]/);
    // Both are on the front of (time, carbon), as the API says.
    expect(await pareto.locator('g.point[data-pareto=true]').count()).toBe(onCarbon.paretoFront.length);
    expect(await pareto.locator('text.optimal-label').allTextContents()).toContain('least energy · least carbon');
    await shot('campaign-pareto-carbon', true);
    // Choosing on x what y shows swaps the two.
    await page.getByTestId('objective-x').selectOption('carbon');
    await waitFor(async () => (await pareto.getAttribute('data-objectives')) === 'carbon,time', { timeoutMs: 15_000, intervalMs: 100, what: 'the Pareto plot on carbon and time' });
    expect(await page.getByTestId('objective-y').inputValue()).toBe('time');

    // A run's page: bytes, rate and J per GB per kind, the overlap, bytes per phase; carbon and cost.
    const cpu = runs.find((r) => r.configurationKey === 'offload=cpu' && r.repetition === 1)!;
    const energy = (await h.call('GET', `/v1/runs/${cpu.id}/energy`)).body;
    await page.goto(`${h.url}/#/runs/${cpu.id}`);
    const movement = page.getByTestId('run-movement');
    await movement.waitFor({ timeout: 30_000 });
    const kinds = page.getByTestId('run-movement-kinds');
    expect(await kinds.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-kind')))).toEqual(['pcie', 'c2c']);
    expect(await kinds.locator('tr[data-kind=pcie] td[data-figure=bytes]').textContent()).toBe('20.0 GB');
    expect(await kinds.locator('tr[data-kind=pcie] td[data-figure=rate]').textContent()).toBe('2.00 GB/s');
    expect(await kinds.locator('tr[data-kind=c2c] td[data-figure=joules-per-gb]').textContent()).toBe(formatJoulesPerGB(energy.dataMovement.kinds[1].joulesPerGB));
    expect(await page.getByTestId('run-overlap').textContent()).toMatch(/^Transfer overlap: \d+\.\d %/);
    const phases = page.getByTestId('run-movement-phases');
    expect((await phases.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-phase')))).sort()).toEqual(['(unmarked)', 'train']);
    expect(await phases.locator('tr[data-phase=train]').textContent()).toMatch(/kJ.*GB/);
    const footprint = page.getByTestId('run-carbon-cost');
    const text = (await footprint.textContent()) ?? '';
    expect(text).toContain('gCO₂e');
    expect(text).toContain('× PUE 1.50 × 400 gCO₂e/kWh');
    expect(text).toMatch(/Intensity source\s*constant — /);
    expect(text).toMatch(/Cost\s*0\.\d+ EUR/);
    expect(text).toContain('per node-hour');
    await shot('run-movement', true);
  });
  test('an adaptive campaign: its decisions on the campaign page, the dominated configuration dropped with why', async () => {
    // examples/adaptive-cpu.yaml as a user submits it, on the local cluster.
    const decoded = decodeCampaignText(readFileSync(path.join(repoRoot(), 'examples', 'adaptive-cpu.yaml'), 'utf8'), 'yaml');
    if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues));
    const campaign = await h.submit(decoded.raw as object);
    await h.waitForCampaignEnd(campaign.id, 240_000);
    const api = (await h.call('GET', `/v1/campaigns/${campaign.id}/decisions`)).body;
    expect(api.open).toBe(false);

    // Signed in as the test before is (the token in the tab's session), whatever ran before.
    await page.goto(h.url + '/');
    await page.evaluate((token) => sessionStorage.setItem('erg.token', token), h.token);
    await page.reload();
    await page.getByRole('heading', { name: 'Queue' }).waitFor();
    await page.goto(`${h.url}/#/campaigns/${campaign.id}`);
    const section = page.getByTestId('decisions');
    await section.waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('decisions-summary').textContent()).toContain(`${api.runsUsed} of the grid's 15 runs at 5 repetitions`);
    expect(await page.getByTestId('decisions-state').textContent()).toBe(`stopped: ${api.stop}`);
    const dropped = section.locator('tr[data-key="iterations=32000000"]');
    expect(await dropped.getAttribute('data-status')).toBe('dropped');
    expect(await dropped.textContent()).toContain('dominated by iterations=4');
    expect(await section.locator('tbody tr').count()).toBe(3);
    await shot('campaign-decisions', true);
  });
});
