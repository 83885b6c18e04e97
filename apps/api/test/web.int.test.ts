import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestApi, type TestApi } from './helpers';

/** What every answer of the web app carries (docs/security.md, "The web app's headers"). */
function expectSecurityHeaders(headers: Record<string, unknown>): void {
  const csp = String(headers['content-security-policy'] ?? '');
  const directives = new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]));
  expect(directives.get('default-src')).toEqual(["'self'"]);
  expect(directives.get('script-src')).toEqual(["'self'"]);
  expect(directives.get('connect-src')).toEqual(["'self'"]);
  expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
  expect(directives.get('object-src')).toEqual(["'none'"]);
  // No inline script or style is allowed anywhere.
  expect(csp).not.toContain('unsafe-inline');
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['referrer-policy']).toBe('no-referrer');
}

describe('the web app at / (ERG_WEB_DIR)', () => {
  let dir: string;
  let t: TestApi;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'erg-web-'));
    mkdirSync(path.join(dir, 'assets'));
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>erg</title><script src="./assets/app-1a2b3c.js"></script>');
    writeFileSync(path.join(dir, 'assets', 'app-1a2b3c.js'), 'console.log("erg")');
    t = await startTestApi({ ERG_WEB_DIR: dir });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('/ is index.html, without a token, never cached', async () => {
    const res = await t.app.inject({ url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.body).toContain('app-1a2b3c.js');
    expectSecurityHeaders(res.headers);
  });

  test('/assets/* are served with long cache headers; a missing one is a 404', async () => {
    const res = await t.app.inject({ url: '/assets/app-1a2b3c.js' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('console.log("erg")');
    expect(res.headers['cache-control']).toMatch(/max-age=31536000/);
    expect(res.headers['cache-control']).toMatch(/immutable/);
    expectSecurityHeaders(res.headers);
    expect((await t.app.inject({ url: '/assets/nope.js' })).statusCode).toBe(404);
    expect((await t.app.inject({ url: '/assets/../index.html' })).statusCode).not.toBe(200);
  });

  test('shadows nothing: the API, its documents and health keep their answers and their token check', async () => {
    expect((await t.app.inject({ url: '/v1/campaigns' })).statusCode).toBe(401);
    expect((await t.app.inject({ url: '/v1/campaigns', headers: { authorization: `Bearer ${t.token}` } })).statusCode).toBe(200);
    expect((await t.app.inject({ url: '/healthz' })).json()).toEqual({ ok: true });
    expect((await t.app.inject({ url: '/openapi.json' })).json().openapi).toBe('3.1.0');
    expect((await t.app.inject({ url: '/docs/' })).statusCode).toBe(200);
    // Other paths still need a token (no catch-all serving of the folder).
    expect((await t.app.inject({ url: '/index.html' })).statusCode).toBe(401);
    expect((await t.app.inject({ url: '//v1/campaigns' })).statusCode).toBe(401);
  });
});

describe('the web app at / before it is built', () => {
  let dir: string;
  let t: TestApi;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'erg-web-empty-'));
    t = await startTestApi({ ERG_WEB_DIR: dir });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('/ answers a small page that says how to build it', async () => {
    const res = await t.app.inject({ url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('not built');
    expect(res.body).toContain('npx turbo run build');
    // The page itself keeps to the policy: no inline style or script.
    expectSecurityHeaders(res.headers);
    expect(res.body).not.toMatch(/style=|<style|<script/);
  });
});
