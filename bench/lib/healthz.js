// A /healthz watcher for benchmarks that measure whether a request holds a server's event loop:
// it polls `${url}/healthz` every ~10 ms from a worker thread of its own (its event loop: the
// benchmark's own JSON work does not delay the polls), and each window gives the latencies it saw.
'use strict';
const { Worker } = require('node:worker_threads');

const POLLER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let samples = [];
let stop = false;
// A window ends with at least one sample: one shorter than a poll waits for the poll in flight
// (or gives up after 2 s without one: the server is not answering).
let ending = false;
let endAt = 0;
const report = () => { ending = false; parentPort.postMessage(samples); };
parentPort.on('message', (m) => {
  if (m === 'start') samples = [];
  else if (m === 'end') { if (samples.length > 0) report(); else { ending = true; endAt = performance.now(); } }
  else if (m === 'stop') stop = true;
});
const once = () => new Promise((resolve) => {
  const t0 = performance.now();
  http.get(workerData + '/healthz', { agent }, (res) => { res.resume(); res.on('end', () => resolve(performance.now() - t0)); })
    .on('error', () => resolve(null));
});
(async () => {
  while (!stop) {
    const ms = await once();
    if (ms !== null) samples.push(ms);
    if (ending && (samples.length > 0 || performance.now() - endAt > 2000)) report();
    await new Promise((r) => setTimeout(r, 10));
  }
  agent.destroy();
  process.exit(0);
})();`;

/** The median of some numbers (the middle two averaged for an even count). */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

const round = (x) => Math.round(x * 10) / 10;

/**
 * Starts polling `url`'s /healthz. `window()` starts a window; its `end()` resolves
 * { samples, medianMs, worstMs } over it (at least one poll: a short window waits up to 2 s for one). `stop()` ends the thread.
 */
function healthPoller(url) {
  const worker = new Worker(POLLER, { eval: true, workerData: url });
  return {
    window() {
      worker.postMessage('start');
      return {
        end: () =>
          new Promise((resolve) => {
            worker.once('message', (samples) => resolve(samples.length ? { samples: samples.length, medianMs: round(median(samples)), worstMs: round(Math.max(...samples)) } : null));
            worker.postMessage('end');
          }),
      };
    },
    stop: () =>
      new Promise((resolve) => {
        worker.once('exit', resolve);
        worker.postMessage('stop');
      }),
  };
}

module.exports = { healthPoller, median };
