#!/usr/bin/env node
// The `erg` executable: runs one command line on the real process and exits with its code.
import { processRuntime } from './context';
import { runCli } from './program';

// `erg results … | head` closes the pipe before erg is done writing: not an error worth a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
});

runCli(process.argv.slice(2), processRuntime()).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`erg: ${String(err)}\n`);
    process.exitCode = 2;
  },
);
