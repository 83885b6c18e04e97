#!/usr/bin/env node
// Writes the reference training workload (examples/multimodal/train_multimodal.py) into
// examples/multimodal-cpu.yaml's `files:` entry, below the line that opens it; the text above that
// line is hand-written. The campaign then stages the script into every run's directory itself, so
// a new user submits the example as it is: no checkout of erg on the cluster, no workloadDir to set
// (and the script's exact text is part of the campaign's spec, recorded with it).
//   node scripts/embed-workload.js          rewrite the example
//   node scripts/embed-workload.js --check  exit 1 when the example's copy differs from the script
// Required as a module it exports embedded(), which the examples' test uses for the same check.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const SCRIPT = path.join(root, 'examples/multimodal/train_multimodal.py');
const EXAMPLE = path.join(root, 'examples/multimodal-cpu.yaml');
/** The line that opens the entry: everything after it is the script, indented by INDENT. */
const OPENER = '  train_multimodal.py: |';
const INDENT = '    ';

/** The example's text with the script embedded after OPENER (which must be its files: entry's last line of hand-written text). */
function embedded(exampleText = fs.readFileSync(EXAMPLE, 'utf8'), scriptText = fs.readFileSync(SCRIPT, 'utf8')) {
  const lines = exampleText.split('\n');
  const at = lines.indexOf(OPENER);
  if (at < 0) throw new Error(`${path.relative(root, EXAMPLE)} has no line "${OPENER}" to embed the script after`);
  // A campaign's files are templates: a "{{" in the script would be read as a placeholder.
  if (scriptText.includes('{{')) throw new Error(`${path.relative(root, SCRIPT)} contains "{{", which a files: template would read as a placeholder`);
  const body = scriptText.replace(/\n$/, '').split('\n').map((line) => (line === '' ? '' : INDENT + line));
  return [...lines.slice(0, at + 1), ...body, ''].join('\n');
}

module.exports = { embedded, EXAMPLE, SCRIPT };

if (require.main === module) {
  const want = embedded();
  const have = fs.readFileSync(EXAMPLE, 'utf8');
  if (process.argv.includes('--check')) {
    if (want !== have) {
      console.error(`${path.relative(root, EXAMPLE)} does not carry the current ${path.relative(root, SCRIPT)}: run node scripts/embed-workload.js`);
      process.exit(1);
    }
  } else if (want !== have) {
    fs.writeFileSync(EXAMPLE, want);
    console.log(`wrote ${path.relative(root, EXAMPLE)}`);
  }
}
