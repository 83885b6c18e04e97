#!/usr/bin/env node
// Benchmark: redactSecrets (packages/secrets) on hostile text — input built to make a
// backtracking regex blow up — and on ordinary job output. Each input is redacted at 64 KiB and
// at 1 MiB; for linear-time redaction the time per byte stays about the same, so the ratio
// (ns/byte at 1 MiB ÷ ns/byte at 64 KiB) is near 1, where a quadratic pattern gives ~16.
//
//   npx turbo run build --filter=@erg/secrets && node bench/redact.js     # --help: the options
'use strict';
const path = require('node:path');
const { parseOptions } = require('./lib/options');

const { opts } = parseOptions({
  script: __filename,
  summary: 'redactSecrets (packages/secrets) on hostile text built to make a backtracking regex blow up, and on ordinary job '
    + 'output: each input redacted at 64 KiB and at 1 MiB, and the ratio of ns per byte at the larger size over the smaller '
    + '(about 1 when linear, about 16 when quadratic). Needs @erg/secrets built (npx turbo run build --filter=@erg/secrets).',
  options: {
    module: { type: 'string', placeholder: 'PATH', defaultText: 'packages/secrets/dist/redact.js', description: 'the redact.js to measure (e.g. one built from an older commit)' },
    'max-ms': { type: 'number', above: 0, default: 20_000, description: 'skip the larger size where the smaller one predicts (quadratically) more milliseconds than this' },
    quick: { type: 'boolean', description: '16 KiB and 256 KiB (a test runs it)' },
    json: { type: 'boolean', description: 'one line of JSON at the end' },
  },
  examples: ['node bench/redact.js', 'node bench/redact.js --module /tmp/old/packages/secrets/dist/redact.js --max-ms 5000'],
});
const [SMALL, BIG] = opts.quick ? [16 << 10, 256 << 10] : [64 << 10, 1 << 20];
const label = (n) => (n >= 1 << 20 ? `${n >> 20}MiB` : `${n >> 10}KiB`);
const { redactSecrets } = require(opts.module ? path.resolve(opts.module) : path.join(__dirname, '..', 'packages', 'secrets', 'dist', 'redact.js'));

const fill = (unit, bytes) => unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
const INPUTS = {
  'many BEGIN headers': (n) => fill('-----BEGIN ', n),
  'BEGIN + header words': (n) => '-----BEGIN ' + fill('A ', n),
  'unterminated key block': (n) => '-----BEGIN PRIVATE KEY-----\n' + fill('x', n),
  'a=a=a=…': (n) => fill('a=', n),
  'dotted names a.a.a.': (n) => fill('a.', n),
  'scheme-like a.b+a.b+': (n) => fill('a.b+', n) + '://',
  'https://uuuu…': (n) => 'https://' + fill('u', n),
  'erg-erg-erg-': (n) => fill('erg-', n),
  'password=password=': (n) => fill('password=', n),
  'Bearer Bearer ': (n) => fill('Bearer ', n),
  'ordinary job output': (n) => fill('step 12 loss=0.1234 tokens/s=5321.2 lr=3e-4 PGPASSFILE=/x\n', n),
};

function time(text) {
  const t0 = process.hrtime.bigint();
  redactSecrets(text);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const rows = [];
for (const [name, make] of Object.entries(INPUTS)) {
  const small = make(SMALL);
  const big = make(BIG);
  time(small); // warm-up
  const smallMs = time(small);
  // A quadratic pattern would take minutes at the larger size: estimate from the smaller one and skip what would not finish.
  const predicted = smallMs * (BIG / SMALL) ** 2;
  const bigMs = predicted > opts['max-ms'] ? null : time(big);
  const perByte = (ms, text) => (ms * 1e6) / text.length;
  rows.push({
    input: name,
    [`${label(SMALL)} ms`]: Number(smallMs.toFixed(2)),
    [`${label(BIG)} ms`]: bigMs === null ? `>${opts['max-ms']} (est. ${Math.round(predicted)})` : Number(bigMs.toFixed(2)),
    // ns per byte at the larger size ÷ at the smaller: ~1 when linear, ~BIG/SMALL when quadratic.
    ratio: bigMs === null ? null : Number((perByte(bigMs, big) / perByte(smallMs, small)).toFixed(2)),
  });
}
if (opts.json) console.log(JSON.stringify({ small: SMALL, big: BIG, rows }));
else console.table(rows);
