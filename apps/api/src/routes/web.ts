import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync } from 'fastify';

/** Shown at `/` until the web app is built, so that a fresh checkout says what to do instead of 404. */
const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>erg</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto">
<h1>erg</h1>
<p>The web app is not built. Run <code>npx turbo run build</code> in the repository and reload this page.</p>
<p>The API itself works: see <a href="/docs">/docs</a>.</p>
</body></html>
`;

/**
 * The built web app (apps/web/dist, or ERG_WEB_DIR) at `/`: index.html never cached (it names the
 * current asset files), `/assets/*` cached for a year (their names carry a content hash). Served
 * without a token: the app asks for one itself. The app routes with the URL hash, so `/` is the
 * only page. Both are read per request, so building the app while the API runs is enough.
 */
export const webRoutes =
  (webDir: string): FastifyPluginAsync =>
  async (app) => {
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
