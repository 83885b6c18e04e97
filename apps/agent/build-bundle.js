#!/usr/bin/env node
// Bundles the agent into ONE self-contained file, dist/erg-agent.js, runnable with plain `node`
// (18+) and no node_modules. koffi stays external: it carries a native binary, and the agent
// runs without it (NVML is then absent and nvidia-smi is used).
//   node build-bundle.js [outfile]
'use strict';
const path = require('node:path');
const { bundleMain, bundleNodeApp } = require('../../scripts/bundle-node-app.js');

const { version } = require('./package.json');

/** Builds the bundle to `outfile`. */
function buildBundle(outfile = path.join(__dirname, 'dist', 'erg-agent.js')) {
  return bundleNodeApp({
    entry: path.join(__dirname, 'src', 'main.ts'),
    outfile,
    target: 'node18',
    external: ['koffi'],
    banner: `#!/usr/bin/env node\n// erg-agent ${version} — erg's telemetry agent, bundled (node erg-agent.js --help)`,
  });
}

module.exports = { buildBundle };

if (require.main === module) bundleMain(buildBundle);
