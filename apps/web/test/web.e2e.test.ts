// The web app end to end: the built app (apps/web/dist) served by a harness API, driven in
// Debian's Chromium through playwright-core, against a campaign that really runs on the local
// Slurm cluster with live telemetry. Screenshots of every page go to test-artifacts/web/.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { repoRoot, waitFor } from '@erg/testkit';
import { setRunWarnings } from '@erg/db/testing';
import { parseCsv } from '@erg/web';
import { Harness } from '../../scheduler/test/harness';

jest.setTimeout(240_000);

const CHROMIUM = process.env.ERG_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = path.join(repoRoot(), 'test-artifacts', 'web');

describe('web app on a live campaign', () => {
  const h = new Harness();
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;

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
  });

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await h.stop();
  });

  const shot = (name: string, fullPage = false) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage });

  test('sign in, watch the queue and a run live, then read the results', async () => {
    // The app is served at / without a token; a wrong token is refused on the form.
    await page.goto(h.url + '/');
    await page.getByLabel('API token').fill('erg_' + 'x'.repeat(43));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('refused this token').waitFor();
    await page.getByLabel('API token').fill(h.token);
    await shot('sign-in');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Queue' }).waitFor();
    await page.getByTestId('live-status').getByText('live').waitFor();

    const campaign = await h.submit({
      name: 'web-e2e', cluster: 'local', parameters: { workers: [1, 2], secs: [6, 8] },
      telemetry: { intervalMs: 200 },
      // secs seconds of CPU work in `workers` processes.
      run: 'for w in $(seq {{workers}}); do timeout {{secs}} sh -c "while :; do :; done" & done; wait; echo done',
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
});
