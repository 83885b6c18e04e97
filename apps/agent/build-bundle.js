#!/usr/bin/env node
// Bundles the agent into ONE self-contained file, dist/erg-agent.js, runnable with plain `node`
// (18+) and no node_modules. koffi stays external: it carries a native binary, and the agent
// runs without it (NVML is then absent and nvidia-smi is used).
//   node build-bundle.js [outfile]
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');

const { version } = require('./package.json');

/** Builds the bundle to `outfile` (written beside it, then renamed: concurrent builds never see half a file). */
async function buildBundle(outfile = path.join(__dirname, 'dist', 'erg-agent.js')) {
  fs.mkdirSync(path.dirname(outfile), { recursive: true });
  const tmp = `${outfile}.tmp-${process.pid}-${Date.now()}`;
  await esbuild.build({
    entryPoints: [path.join(__dirname, 'src', 'main.ts')],
    outfile: tmp,
    bundle: true,
    platform: 'node',
    target: 'node18',
    format: 'cjs',
    external: ['koffi'],
    minify: false,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
    banner: { js: `#!/usr/bin/env node\n// erg-agent ${version} — erg's telemetry agent, bundled (node erg-agent.js --help)` },
  });
  fs.chmodSync(tmp, 0o755);
  fs.renameSync(tmp, outfile);
  return outfile;
}

module.exports = { buildBundle };

if (require.main === module) {
  buildBundle(process.argv[2]).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
