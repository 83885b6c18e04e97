import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync } from 'fastify';

/** Shown at `/` until the web app is built, so that a fresh checkout says what to do instead of 404. */
const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>erg</title></head>
<body>
<h1>erg</h1>
<p>The web app is not built. Run <code>npx turbo run build</code> in the repository and reload this page.</p>
<p>The API itself works: see <a href="/docs">/docs</a>.</p>
</body></html>
`;

/**
 * The browser's rules for the web app (docs/security.md, "The web app's headers"): everything from
 * erg's own origin only — the bundle has no inline script or style (React sets styles through the
 * DOM, which CSP allows), the live stream is a fetch to /v1/events (connect-src), PNG exports draw
 * an SVG from a blob: URL — and no page may frame it (clickjacking), nor a browser guess a type.
 */
export const WEB_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' blob:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * The built web app (apps/web/dist, or ERG_WEB_DIR) at `/`: index.html never cached (it names the
 * current asset files), `/assets/*` cached for a year (their names carry a content hash). Served
 * without a token: the app asks for one itself. The app routes with the URL hash, so `/` is the
 * only page. Both are read per request, so building the app while the API runs is enough.
 */
export const webRoutes =
  (webDir: string): FastifyPluginAsync =>
  async (app) => {
    // This plugin's routes only (encapsulation): the API's JSON and /docs are not the web app.
    app.addHook('onSend', async (_req, reply) => {
      reply.headers(WEB_SECURITY_HEADERS);
    });
    await app.register(fastifyStatic, {
      root: path.join(webDir, 'assets'),
      prefix: '/assets/',
      index: false,
      maxAge: '365d',
      immutable: true,
      schemaHide: true,
    });

    app.get('/', { schema: { hide: true } }, async (_req, reply) => {
      if (!existsSync(path.join(webDir, 'index.html'))) {
        return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(NOT_BUILT_PAGE);
      }
      return reply.header('cache-control', 'no-cache').sendFile('index.html', webDir, { cacheControl: false });
    });
  };
