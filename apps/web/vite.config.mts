// The web UI is a static bundle: index.html + assets/, served by the API at `/` (ERG_WEB_DIR).
// Relative asset paths, so the same build works under any prefix; hash routing, so the API
// only ever serves index.html.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  base: './',
  plugins: [react()],
  // The formatters shared with the CLI, the backoff shared with Node and erg's error catalog,
  // compiled from their TypeScript sources (the packages' own builds are CommonJS for Node).
  resolve: {
    alias: {
      '@erg/format': fileURLToPath(new URL('../../packages/format/src/index.ts', import.meta.url)),
      '@erg/backoff': fileURLToPath(new URL('../../packages/backoff/src/index.ts', import.meta.url)),
      '@erg/spec/errors': fileURLToPath(new URL('../../packages/spec/src/errors.ts', import.meta.url)),
    },
  },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1000 },
  // `npm run dev -w @erg/web`: the app with hot reload, its API calls sent to a running API.
  server: { proxy: { '/v1': { target: process.env.ERG_API_URL ?? 'http://127.0.0.1:8080', changeOrigin: true } } },
});
