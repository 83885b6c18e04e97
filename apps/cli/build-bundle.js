#!/usr/bin/env node
// Bundles the CLI into ONE self-contained executable, dist/erg, runnable with Node 20+ and no
// node_modules beside it: what a researcher copies to a laptop or a login node (docs/cli.md).
// package.json's version is inlined (program.ts requires it); nothing else is read at start-up.
//   node build-bundle.js [outfile]
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');

const { version } = require('./package.json');

/** Builds the bundle to `outfile` (written beside it, then renamed: a concurrent run never sees half a file). */
async function buildCliBundle(outfile = path.join(__dirname, 'dist', 'erg')) {
  fs.mkdirSync(path.dirname(outfile), { recursive: true });
  const tmp = `${outfile}.tmp-${process.pid}-${Date.now()}`;
  await esbuild.build({
    entryPoints: [path.join(__dirname, 'src', 'main.ts')],
    outfile: tmp,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
    // esbuild keeps main.ts's `#!/usr/bin/env node` as the first line; the banner follows it.
    banner: { js: `// erg ${version} — erg's command-line tool, bundled (erg --help)` },
  });
  fs.chmodSync(tmp, 0o755);
  fs.renameSync(tmp, outfile);
  return outfile;
}

module.exports = { buildCliBundle };

if (require.main === module) {
  buildCliBundle(process.argv[2]).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
