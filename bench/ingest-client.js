// Load generator for bench/ingest.js, in its own process so that it does not share the API's
// event loop: `agents` concurrent agents, each POSTing columnar batches back to back for
// `seconds`, each batch `sensors` × `perSensor` samples with its own seq.
'use strict';
const http = require('node:http');
const { parseOptions } = require('./lib/options');

const { opts } = parseOptions({
  script: __filename,
  summary: 'the load generator of bench/ingest.js (which starts it), in its own process: one agent per run id, each POSTing '
    + 'columnar telemetry batches back to back for `seconds`, each batch `sensors` × `perSensor` samples with its own seq; '
    + 'prints one JSON object (samples accepted, requests, bytes, seconds).',
  positionals: [
    { name: 'api', type: 'string', required: true, check: (v) => (URL.canParse(v) ? undefined : 'a URL'), description: 'the API\'s base URL' },
    { name: 'token', type: 'string', required: true, description: 'an API token that may post the runs\' telemetry' },
    { name: 'runIds', type: 'json', required: true, check: (v) => (Array.isArray(v) && v.length > 0 ? undefined : 'a JSON array of run ids'), description: 'JSON array of the import runs, one agent each' },
    { name: 'seconds', type: 'number', above: 0, required: true, description: 'how long the agents post' },
    { name: 'sensors', type: 'integer', min: 1, required: true, check: (v) => (v <= 8 ? undefined : 'at most 8'), description: 'sensors per batch (at most 8)' },
    { name: 'perSensor', type: 'integer', min: 1, required: true, description: 'samples per sensor per batch' },
  ],
  options: {},
  examples: [`node bench/ingest-client.js http://127.0.0.1:3000 erg_… '["<run id>"]' 3 8 250`],
});
const runIds = opts.runIds;
const SENSORS = ['gpu0.power', 'gpu1.power', 'gpu2.power', 'gpu3.power', 'module0.power', 'grace0.power', 'cpu0.power', 'sysio0.power'].slice(0, opts.sensors);
const N = opts.perSensor;
const url = new URL(opts.api);
const token = opts.token;
const agent = new http.Agent({ keepAlive: true, maxSockets: runIds.length });

// The samples part is the same for every batch (only seq changes): build it once per agent.
function samplesJson(startMs) {
  const t = Array.from({ length: N }, (_, i) => +(startMs + i * 10).toFixed(3));
  return JSON.stringify(SENSORS.map((sensor, k) => ({ sensor, t, v: t.map((_, i) => 100 + k + (i % 50)) })));
}

function post(runId, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, path: `/v1/runs/${runId}/telemetry`, method: 'POST', agent,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let data = '';
        res.on('data', (c) => (data += c));
        res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(data)) : reject(new Error(`${res.statusCode} ${data.slice(0, 300)}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function main() {
  const deadline = Date.now() + opts.seconds * 1000;
  const start = Date.now();
  let accepted = 0;
  let requests = 0;
  let bytes = 0;
  await Promise.all(
    runIds.map(async (runId, a) => {
      const samples = samplesJson(Date.now() - 60_000 + a);
      for (let seq = 0; Date.now() < deadline; seq++) {
        const body = `{"node":"node${a}","seq":${seq},"samples":${samples}}`;
        const r = await post(runId, body);
        accepted += r.accepted;
        requests++;
        bytes += body.length;
      }
    }),
  );
  process.stdout.write(JSON.stringify({ accepted, requests, bytes, elapsedS: (Date.now() - start) / 1000 }));
}

main().catch((err) => {
  console.error(err.message);
  process.exit(1);
});
