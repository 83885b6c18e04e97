// Client of bench/hostile-requests.js, in its own process so that building and sending the
// requests does not share the API's event loop: for each kind of hostile request, polls
// /healthz every ~10 ms while it sends the request `repeat` times one after the other, and
// prints one JSON object: per kind, the answers' status codes and codes, request times, and
// /healthz latencies (median and worst).
//
//   node bench/hostile-client.js <api> '<json: { adminToken, viewerToken, runId, repeat, kinds? }>'
'use strict';
const http = require('node:http');
const { gzipSync } = require('node:zlib');
const { parseOptions } = require('./lib/options');

const { opts } = parseOptions({
  script: __filename,
  summary: 'the client of bench/hostile-requests.js (which starts it), in its own process: for each kind of hostile request, '
    + 'polls /healthz every ~10 ms while it sends the request `repeat` times one after the other, and prints one JSON object: '
    + 'per kind, the answers\' status codes and codes, request times and /healthz latencies (median and worst).',
  positionals: [
    { name: 'api', type: 'string', required: true, check: (v) => (URL.canParse(v) ? undefined : 'a URL'), description: 'the API\'s base URL' },
    { name: 'config', type: 'json', required: true, description: 'JSON { adminToken, viewerToken, runId, repeat, kinds? }: the tokens, the import run whose telemetry is sent, how many times each kind is sent, which kinds (all when absent)' },
  ],
  options: {},
  examples: [`node bench/hostile-client.js http://127.0.0.1:3000 '{"adminToken":"erg_…","viewerToken":"erg_…","runId":"…","repeat":1}'`],
});
const config = opts.config;
const url = new URL(opts.api);
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

const range = (n) => Array.from({ length: n }, (_, i) => i);
const cube = { a: range(100), b: range(100), c: range(100) };
const importSpec = (extra) => ({ name: 'hostile', execution: 'import', ...extra });

/** Every kind of request of issue 10 §2, with the status it must get. Bodies are built once, before any timing. */
function kinds(now) {
  // Sent twice: by an admin (refused for its size) and by a viewer (refused before it is read).
  const refusedGrid = JSON.stringify(importSpec({ parameters: cube, exclude: range(1000).map((i) => ({ a: i % 100, b: Math.floor(i / 100), c: 7 })) }));
  return [
    {
      kind: 'grid-refused',
      what: '100×100×100 grid, 1,000 single-point excludes (999,000 configurations > ERG_MAX_RUNS)',
      method: 'POST', path: '/v1/campaigns?project=default', token: 'admin', expect: 400,
      body: refusedGrid,
    },
    {
      kind: 'grid-accepted',
      what: '100×100×100 grid, 1,000 excludes leaving 9,002 configurations (created, 9,002 runs)',
      method: 'POST', path: '/v1/campaigns?project=default', token: 'admin', expect: 201,
      body: JSON.stringify(importSpec({
        parameters: cube,
        exclude: [{ a: range(100).slice(10) }, { b: range(100).slice(10) }, ...range(998).map((i) => ({ a: i < 100 ? 0 : 1 + (i % 9), b: 0, c: i % 100 }))],
      })),
    },
    {
      kind: 'grid-viewer',
      what: 'the refused grid sent with a viewer token',
      method: 'POST', path: '/v1/campaigns?project=default', token: 'viewer', expect: 403,
      body: refusedGrid,
    },
    {
      kind: 'telemetry-empty-series',
      what: '40,000 empty series, gzip (about 5 KB on the wire)',
      method: 'POST', path: `/v1/runs/${config.runId}/telemetry`, token: 'admin', expect: 400, gzip: true,
      body: JSON.stringify({ node: 'n1', seq: 1, samples: range(40_000).map(() => ({ sensor: 'gpu0.power', t: [], v: [] })) }),
    },
    {
      kind: 'telemetry-max-batch',
      what: 'the largest batch accepted: 200,000 samples in 8 columns (about 7 MiB)',
      method: 'POST', path: `/v1/runs/${config.runId}/telemetry`, token: 'admin', expect: 200, fresh: true,
      body: (seq) => {
        const t = range(25_000).map((i) => now - 600_000 + i * 10.123456789);
        return JSON.stringify({ node: 'n1', seq, samples: range(8).map((g) => ({ sensor: `gpu${g}.power`, t, v: t.map((_, i) => 250.123456789 + (i % 97)) })) });
      },
    },
    {
      kind: 'deep-json',
      what: 'JSON nested 5,000 levels deep',
      method: 'POST', path: '/v1/campaigns?project=default', token: 'admin', expect: 400,
      body: `{"name":"deep","execution":"import","description":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
    },
    {
      kind: 'deep-yaml',
      what: 'YAML nested 5,000 levels deep',
      method: 'POST', path: '/v1/campaigns?project=default', token: 'admin', expect: 400, yaml: true,
      body: `name: deep\nexecution: import\ndescription: ${'['.repeat(5000)}${']'.repeat(5000)}\n`,
    },
    {
      kind: 'yaml-alias-bomb',
      what: '99 aliases of one 200 KB scalar (20 MB expanded)',
      method: 'POST', path: '/v1/campaigns?project=default', token: 'admin', expect: 400, yaml: true,
      body: ['name: bomb', 'execution: import', `description: &big ${'x'.repeat(200_000)}`, 'files:', ...range(99).map((i) => `  f${i}.txt: *big`)].join('\n') + '\n',
    },
    {
      kind: 'yaml-1mib-flow',
      what: '1 MiB of flow-style YAML (64 parameters × 700 values), parsed in a worker',
      method: 'POST', path: '/v1/campaigns?project=default', token: 'admin', expect: 400, yaml: true,
      body: ['name: big', 'execution: import', 'parameters:', ...range(64).map((p) => `  p${p}: [${range(700).map((v) => `value-${p}-${v}-xxxxxx`).join(', ')}]`)].join('\n') + '\n',
    },
    {
      kind: 'oversized-keys',
      what: '8 parameter names of 60 KB, each with a 40 KB value',
      method: 'POST', path: '/v1/campaigns?project=default', token: 'admin', expect: 400,
      body: JSON.stringify(importSpec({ parameters: Object.fromEntries(range(8).map((i) => [`${i}${'k'.repeat(60_000)}`, ['v'.repeat(40_000)]])) })),
    },
    {
      kind: 'many-issues',
      what: '40,000 exclude values that match nothing (a 198 MB report before)',
      method: 'POST', path: '/v1/campaigns?project=default', token: 'admin', expect: 400,
      body: JSON.stringify(importSpec({ parameters: { a: range(1000) }, exclude: range(1000).map(() => ({ a: range(40).map((k) => 5000 + k) })) })),
    },
  ];
}

function request(method, path, headers, body) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request({ host: url.hostname, port: url.port, path, method, agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Polls /healthz every ~10 ms until stopped; each latency is from sending to the full answer. */
function pollHealth() {
  const latencies = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const res = await request('GET', '/healthz', {});
      if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
      latencies.push(res.ms);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    return latencies;
  };
}

function summary(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const median = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return { n: s.length, median: +median.toFixed(1), worst: +s[s.length - 1].toFixed(1) };
}

async function main() {
  const now = Date.now();
  const selected = kinds(now).filter((k) => !config.kinds || config.kinds.includes(k.kind));
  const results = [];
  // Idle first: what /healthz costs with nothing else going on.
  const stopIdle = pollHealth();
  await new Promise((r) => setTimeout(r, config.repeat > 1 ? 1000 : 200));
  results.push({ kind: 'idle', what: 'nothing else', statuses: [], codes: [], requestMs: null, healthz: summary(await stopIdle()) });
  let seq = 100;
  for (const k of selected) {
    const bodies = range(config.repeat).map(() => {
      const text = typeof k.body === 'function' ? k.body(seq++) : k.body;
      return k.gzip ? gzipSync(text) : Buffer.from(text);
    });
    const headers = {
      authorization: `Bearer ${k.token === 'viewer' ? config.viewerToken : config.adminToken}`,
      'content-type': k.yaml ? 'application/yaml' : 'application/json',
      ...(k.gzip ? { 'content-encoding': 'gzip' } : {}),
    };
    const stop = pollHealth();
    await new Promise((r) => setTimeout(r, 50));
    const statuses = [];
    const codes = [];
    const times = [];
    let responseBytes = 0;
    for (const body of bodies) {
      const res = await request(k.method, k.path, { ...headers, 'content-length': body.length }, body);
      statuses.push(res.status);
      times.push(res.ms);
      responseBytes = Math.max(responseBytes, res.body.length);
      try {
        const parsed = JSON.parse(res.body.toString('utf8'));
        codes.push(parsed.error?.issues?.[0]?.code ?? parsed.error?.code ?? null);
      } catch {
        codes.push(null);
      }
    }
    await new Promise((r) => setTimeout(r, 50));
    const healthz = summary(await stop());
    results.push({
      kind: k.kind, what: k.what, expect: k.expect, bodyBytes: bodies[0].length, responseBytes, statuses, codes, requestMs: summary(times), healthz,
    });
  }
  process.stdout.write(JSON.stringify(results));
  agent.destroy();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
