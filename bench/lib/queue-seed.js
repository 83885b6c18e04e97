// The queue benchmarks' data (bench/queue.js for the API, bench/queue-view.js for the web app):
// 10,000 unfinished runs — 2 clusters, 20 campaigns of 500 runs (250 configurations × 2
// repetitions); per cluster 2,000 runs claimed, 1,000 of them queued and 300 of those running, each
// running run with a minute of telemetry (gpu0.power, cpu0.power) so live power is read too.
// A smaller `runs` (the quick modes) keeps the proportions: runs/40 configurations per campaign;
// per cluster runs/5 claimed, runs/10 queued and 3 % of `runs` running.
'use strict';
const { generateKeyPairSync } = require('node:crypto');
const { claimRunsForSubmission, countUnfinishedRuns, findClusterByName, markRunsQueued, recordSlurmProgress } = require('@erg/db');
const { analyzeTables } = require('@erg/db/testing');

const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

/** How `runs` runs (a multiple of 200) are laid out; claimed, queued and running are per cluster, each a part of the one before. */
function queueSeedShape(runs = 10_000) {
  if (!(Number.isInteger(runs) && runs > 0 && runs % 200 === 0)) throw new Error(`seedQueue: runs must be a positive multiple of 200, not ${runs}`);
  return { runs, campaigns: 20, configurations: runs / 40, claimed: runs / 5, queued: runs / 10, running: (runs * 3) / 100 };
}

/** Seeds the runs through the API (and the scheduler's own transitions); returns how many are unfinished. */
async function seedQueue({ call, db }, campaignPrefix, runs = 10_000) {
  const shape = queueSeedShape(runs);
  for (const name of ['alpha', 'beta']) {
    await call('POST', '/v1/clusters', {
      name, host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY, hostKeySha256: 'SHA256:' + 'A'.repeat(43),
      workDir: '/var/lib/erg-bench', defaultPartition: 'gpu',
    });
  }
  for (let i = 0; i < shape.campaigns; i++) {
    await call('POST', '/v1/campaigns', {
      name: `${campaignPrefix}-${i}`, cluster: i % 2 ? 'beta' : 'alpha', repetitions: 2,
      parameters: { n: Array.from({ length: shape.configurations }, (_, k) => k + 1) }, resources: { nodes: 1, time: '00:10:00' }, run: 'echo {{n}}',
    });
  }
  const now = Date.now();
  const t = Array.from({ length: 60 }, (_, k) => now - 60_000 + k * 1000);
  for (const name of ['alpha', 'beta']) {
    const cluster = await findClusterByName(db, name);
    const claimed = await claimRunsForSubmission(db, cluster.id, shape.claimed);
    const queued = claimed.slice(0, shape.queued);
    await markRunsQueued(db, queued.map((r, k) => ({ runId: r.id, slurmJobId: String(100000 + k) })));
    const running = queued.slice(0, shape.running);
    await recordSlurmProgress(db, running.map((r) => ({ runId: r.id, state: 'running', slurmState: 'RUNNING', reason: null, startedAt: new Date(), nodeList: 'node01' })));
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < running.length) {
        const r = running[next++];
        await call('POST', `/v1/runs/${r.id}/telemetry`, {
          node: 'node01', seq: 0,
          samples: [{ sensor: 'gpu0.power', t, v: t.map(() => 300) }, { sensor: 'cpu0.power', t, v: t.map(() => 90) }],
        });
      }
    }));
  }
  await analyzeTables(db);
  return countUnfinishedRuns(db, null);
}

module.exports = { seedQueue, queueSeedShape };
