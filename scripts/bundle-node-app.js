// Bundles one of erg's Node apps into ONE self-contained file with esbuild: the CLI (apps/cli,
// dist/erg: what a researcher copies to a laptop or a login node) and the telemetry agent
// (apps/agent, dist/erg-agent.js: what the scheduler stages beside every job). Each app's
// build-bundle.js says what its bundle is; this says how every bundle is written: CommonJS for
// Node, written beside the target and then renamed, so that a concurrent build or a job starting
// never sees half a file.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/**
 * @param {{ entry: string, outfile: string, target: string, banner: string, minify?: boolean, external?: string[] }} bundle
 * @returns {Promise<string>} the bundle's path
 */
async function bundleNodeApp({ entry, outfile, target, banner, minify = false, external = [] }) {
  // The app's own esbuild (a dependency of each app, not of the repository's root).
  const esbuild = require(require.resolve('esbuild', { paths: [path.dirname(entry)] }));
  fs.mkdirSync(path.dirname(outfile), { recursive: true });
  const tmp = `${outfile}.tmp-${process.pid}-${Date.now()}`;
  await esbuild.build({
    entryPoints: [entry],
    outfile: tmp,
    bundle: true,
    platform: 'node',
    target,
    format: 'cjs',
    external,
    minify,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
    banner: { js: banner },
  });
  fs.chmodSync(tmp, 0o755);
  fs.renameSync(tmp, outfile);
  return outfile;
}

/** A build-bundle.js's command line: `node build-bundle.js [outfile]`. */
function bundleMain(build) {
  build(process.argv[2]).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

module.exports = { bundleNodeApp, bundleMain };
