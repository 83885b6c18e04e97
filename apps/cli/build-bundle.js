#!/usr/bin/env node
// Bundles the CLI into ONE self-contained executable, dist/erg, runnable with Node 20+ and no
// node_modules beside it: what a researcher copies to a laptop or a login node (docs/cli.md).
// package.json's version is inlined (program.ts requires it); nothing else is read at start-up.
//   node build-bundle.js [outfile]
'use strict';
const path = require('node:path');
const { bundleMain, bundleNodeApp } = require('../../scripts/bundle-node-app.js');

const { version } = require('./package.json');

/** Builds the bundle to `outfile`. */
function buildCliBundle(outfile = path.join(__dirname, 'dist', 'erg')) {
  return bundleNodeApp({
    entry: path.join(__dirname, 'src', 'main.ts'),
    outfile,
    target: 'node20',
    minify: true,
    // esbuild keeps main.ts's `#!/usr/bin/env node` as the first line; the banner follows it.
    banner: `// erg ${version} — erg's command-line tool, bundled (erg --help)`,
  });
}

module.exports = { buildCliBundle };

if (require.main === module) bundleMain(buildCliBundle);
