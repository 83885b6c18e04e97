// Load generator for bench/ingest.js, in its own process so that it does not share the API's
// event loop: `agents` concurrent agents, each POSTing columnar batches back to back for
// `seconds`, each batch `sensors` × `perSensor` samples with its own seq.
'use strict';
const http = require('node:http');

const [api, token, runIdsJson, seconds, sensors, perSensor] = process.argv.slice(2);
const runIds = JSON.parse(runIdsJson);
const SENSORS = ['gpu0.power', 'gpu1.power', 'gpu2.power', 'gpu3.power', 'module0.power', 'grace0.power', 'cpu0.power', 'sysio0.power'].slice(0, Number(sensors));
const N = Number(perSensor);
const url = new URL(api);
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
  const deadline = Date.now() + Number(seconds) * 1000;
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
