#!/usr/bin/env node
// The last lines of `npm test` (scripts/test.sh): every jest run's counts added up, and each failed
// test named with the first lines of why, read from the runs' JSON artifacts. Printed last because
// a CI log is often seen only by its tail, and the jest runs print their failures in the middle
// (the e2e chains' logs one after another): the tail then says what failed and why.
//
// Usage: node scripts/test-summary.js ARTIFACT…   prints the digest, then "tests: P passed, F failed"
// A run that left no artifact (or an unreadable one) counts as one failure.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/** Lines of each failure message shown. */
const MESSAGE_LINES = 12;
/** Failed tests shown with their message at most (the rest by name). */
const SHOWN = 20;

const ANSI = /\u001b\[[0-9;]*m/g;

/** Counts and failures of the artifacts (jest --json output files). */
function summarize(artifacts, root = process.cwd()) {
  let passed = 0;
  let failed = 0;
  const failures = [];
  for (const artifact of artifacts) {
    let run;
    try {
      run = JSON.parse(fs.readFileSync(path.resolve(root, artifact), 'utf8'));
      if (!Number.isInteger(run.numPassedTests) || !Number.isInteger(run.numFailedTests)) throw new Error('not jest results');
    } catch {
      failed += 1;
      failures.push({ where: artifact, title: 'no readable test results (the jest run did not finish)', message: '' });
      continue;
    }
    passed += run.numPassedTests;
    failed += run.numFailedTests + (run.numRuntimeErrorTestSuites ?? 0);
    for (const file of run.testResults ?? []) {
      const where = path.relative(root, file.name);
      const failedTests = (file.assertionResults ?? []).filter((a) => a.status === 'failed');
      for (const a of failedTests) failures.push({ where, title: [...(a.ancestorTitles ?? []), a.title].join(' › '), message: (a.failureMessages ?? []).join('\n') });
      // A file that failed without a failed test (it did not load, a hook threw).
      if (failedTests.length === 0 && file.status === 'failed') failures.push({ where, title: 'the file failed to run', message: file.message ?? '' });
    }
  }
  return { passed, failed, failures };
}

/** The first lines of a failure message that say something (no blank lines, no ANSI colours, no stack frames). */
function gist(message) {
  return message
    .replace(ANSI, '')
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '' && !/^\s*at /.test(l))
    .slice(0, MESSAGE_LINES);
}

function digest({ passed, failed, failures }) {
  const lines = [];
  if (failures.length > 0) {
    lines.push('', `failed (${failures.length}):`);
    failures.forEach((f, i) => {
      lines.push(`- ${f.where}: ${f.title}`);
      if (i < SHOWN) for (const l of gist(f.message)) lines.push(`    ${l}`);
    });
  }
  lines.push('', `tests: ${passed} passed, ${failed} failed`);
  return lines.join('\n');
}

module.exports = { summarize, digest, gist };

if (require.main === module) console.log(digest(summarize(process.argv.slice(2))));
