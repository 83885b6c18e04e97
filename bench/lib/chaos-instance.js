// A disposable erg for the chaos suite: its own Postgres cluster and Redis server (the testkit's
// disposable ones, which the suite restarts and wipes), 2 API and 3 scheduler processes from the
// build, and two clusters registered through the API on the local Slurm cluster — `chaos` through
// the normal sshd port, `chaos-slow` through the door where every sbatch takes 4 s, so that a
// scheduler can be killed while its sbatch loop is mid-flight. `close()` stops all of it.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { countUnfinishedRuns, createApiToken, createDatabase, ensureDatabase, listRunOutcomes, migrate } = require('@erg/db');
const { closedPort, loadLocalCluster, startDisposablePostgres, startDisposableRedis, TEST_SECRET_KEY, waitFor } = require('@erg/testkit');
const { AppProcess } = require('./chaos-processes');
const { LocalClusterOps } = require('./chaos-cluster');

const root = path.resolve(__dirname, '..', '..');
const MAIN_CLUSTER = 'chaos';
const SLOW_CLUSTER = 'chaos-slow';

class ChaosInstance {
  /**
   * @param {{ apis: number, schedulers: number, concurrency: number, pollIntervalMs: number,
   *   progress: (line: string) => void }} options
   */
  constructor(options) {
    this.options = options;
    this.stamp = `${Date.now().toString(36)}${process.pid.toString(36)}`;
    this.prefix = `chaos_${this.stamp}`;
    this.local = loadLocalCluster();
    this.cluster = new LocalClusterOps(this.local);
    this.workDir = `${this.local.workDir}/chaos-${this.stamp}`;
    this.logDir = path.join(root, 'test-artifacts', `chaos-${this.stamp}`);
    this.t0 = Date.now();
    this.now = () => Date.now();
    /** @type {AppProcess[]} */
    this.apis = [];
    /** @type {AppProcess[]} */
    this.schedulers = [];
    this.postgres = null;
    this.redis = null;
    this.db = null;
    this.token = null;
    this.campaignIds = [];
    this.closed = false;
  }

  get clusters() {
    return { main: MAIN_CLUSTER, slow: SLOW_CLUSTER };
  }

  async start() {
    const say = this.options.progress;
    fs.mkdirSync(this.logDir, { recursive: true });
    say(`logs: ${path.relative(root, this.logDir)}/`);
    [this.postgres, this.redis] = await Promise.all([startDisposablePostgres(), startDisposableRedis()]);
    const url = this.postgres.url('erg');
    say(`Postgres on :${this.postgres.port}, Redis on :${this.redis.port}`);
    // Migrated here once, so that five processes starting at once do not race to do it.
    await ensureDatabase(url);
    await migrate(url);
    // Its idle clients may lose their server (the Postgres fault): createDatabase's pool ignores that.
    this.db = createDatabase(url, { max: 3 });
    this.token = (await createApiToken(this.db, 'chaos')).token;

    const common = {
      DATABASE_URL: url, REDIS_URL: this.redis.url, ERG_QUEUE_PREFIX: this.prefix, ERG_SECRET_KEY: TEST_SECRET_KEY,
    };
    for (let slot = 0; slot < this.options.apis; slot++) {
      const port = await closedPort();
      this.apis.push(new AppProcess({
        role: 'api', slot, logDir: this.logDir, now: this.now, url: `http://127.0.0.1:${port}`,
        env: { ...common, ERG_API_HOST: '127.0.0.1', ERG_API_PORT: String(port), LOG_LEVEL: 'warn' },
      }));
    }
    for (let slot = 0; slot < this.options.schedulers; slot++) {
      this.schedulers.push(new AppProcess({
        role: 'scheduler', slot, logDir: this.logDir, now: this.now,
        // debug: the "cycle phase" lines the phase faults wait for.
        env: { ...common, ERG_POLL_INTERVAL_MS: String(this.options.pollIntervalMs), ERG_METRICS_PORT: '0', LOG_LEVEL: 'debug' },
      }));
    }
    // On 2 cores five Node processes starting at once take long; one after the other is as quick.
    for (const p of [...this.apis, ...this.schedulers]) await p.start();
    say(`${this.apis.length} API processes (${this.apis.map((a) => a.url).join(', ')}), ${this.schedulers.length} schedulers`);

    // The local cluster is on loopback: the admin allows that for the project, as the quickstart does.
    await this.call('PUT', '/v1/projects/default/cluster-policy', { allowHosts: [this.local.host] });
    for (const [name, port, maxConcurrentRuns] of [
      [MAIN_CLUSTER, this.local.port, this.options.concurrency],
      [SLOW_CLUSTER, this.local.slowSbatchPort, 1],
    ]) {
      await this.call('PUT', `/v1/clusters/${name}`, {
        host: this.local.host, port, user: this.local.user, privateKey: this.local.privateKey, hostKeySha256: this.local.hostKeySha256,
        defaultPartition: this.local.partition, workDir: this.workDir, maxConcurrentRuns,
        // Where nodes lack Node.js (the 24.11 cluster), erg's runtime is staged once for every test
        // and bench there, in the cluster work dir's own folder, not again in each bench's work dir.
        runtimeDir: `${this.local.workDir}/.erg/runtime`,
        // Agents push live to the first API; what they cannot push (it is down) the scheduler pulls from their spool.
        agentApiUrl: this.apis[0].url,
      });
    }
  }

  /** JSON over HTTP with the suite's admin token, through the first API process that answers. */
  async call(method, route, body) {
    let last = null;
    for (const api of this.apis) {
      try {
        const res = await fetch(api.url + route, {
          method,
          headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
        const data = await res.json();
        if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(data)}`);
        return data;
      } catch (err) {
        last = err;
      }
    }
    throw last;
  }

  /** Submits one campaign of `runs` short runs on `cluster`; returns its id and run ids. */
  async submit(name, cluster, runs, run) {
    const campaign = await this.call('POST', '/v1/campaigns', {
      name, cluster,
      parameters: { i: Array.from({ length: runs }, (_, k) => k + 1) },
      // Side by side, as before whole nodes became the default: the suite measures recovery, not energy.
      resources: { cpusPerTask: 1, time: '00:05:00', exclusive: false },
      telemetry: { intervalMs: 200 },
      run,
    });
    this.campaignIds.push(campaign.id);
    return { id: campaign.id, runIds: campaign.runs.map((r) => r.id) };
  }

  /** A read of the instance's database that waits out the Postgres fault (retried for up to 60 s). */
  async read(fn) {
    return waitFor(() => fn(this.db), { timeoutMs: 60_000, intervalMs: 250, what: 'the disposable Postgres to answer' });
  }

  /** How many runs of these campaigns are not in an end state yet. */
  async unfinished(campaignIds) {
    return this.read((db) => countUnfinishedRuns(db, campaignIds));
  }

  /** Every run of these campaigns with what the ledger needs: state, job id, energy, last event (the ledger's column names). */
  async runsOf(campaignIds) {
    const runs = await this.read((db) => listRunOutcomes(db, campaignIds));
    return runs.map((r) => ({
      id: r.id, campaign_id: r.campaignId, state: r.state, slurm_job_id: r.slurmJobId, reason: r.reason, submit_attempts: r.submitAttempts,
      has_energy: r.hasEnergy, energy_method: r.energyMethod, energy_j: r.energyJ, last_event_at: r.lastEventAt,
      array_submission: r.arraySubmission, array_index: r.arrayIndex,
    }));
  }

  /** Every process's exits the suite did not cause. */
  unexpectedExits() {
    return [...this.apis, ...this.schedulers].flatMap((p) => p.unexpectedExits.map((e) => ({ process: p.name, ...e })));
  }

  /**
   * Stops everything this instance started, whatever state the faults left it in: the cluster's
   * daemons back, our Slurm jobs cancelled and their files removed, the processes, Redis and the
   * Postgres cluster gone. Each step runs even when an earlier one failed.
   */
  async close() {
    if (this.closed) return;
    this.closed = true;
    const say = this.options.progress;
    const step = async (what, fn) => {
      try {
        await fn();
      } catch (err) {
        say(`cleanup: ${what} failed: ${err.message}`);
      }
    };
    await step('restoring the cluster', () => this.cluster.restoreAll());
    await step('stopping the processes', () => Promise.all([...this.schedulers, ...this.apis].map((p) => p.stop())));
    await step('cancelling leftover Slurm jobs', async () => {
      if (!this.db || this.campaignIds.length === 0) return;
      const runs = await listRunOutcomes(this.db, this.campaignIds);
      const n = await this.cluster.cancelJobsOf(runs.map((r) => ({ id: r.id, array_submission: r.arraySubmission, array_index: r.arrayIndex })));
      if (n > 0) say(`cleanup: cancelled ${n} Slurm jobs still held`);
    });
    await step('removing the work dir', () => this.cluster.removeDir(this.workDir));
    await step('closing the cluster connection', () => this.cluster.close());
    await step('closing the database handle', async () => this.db?.close());
    await step('stopping Redis', async () => this.redis?.stop());
    await step('dropping the Postgres cluster', async () => this.postgres?.destroy());
  }

  /** Synchronous last resort for exit paths that cannot wait: daemons back, children killed. */
  killNow() {
    this.cluster.restoreNow();
    for (const p of [...this.schedulers, ...this.apis]) {
      p.stopped = true;
      if (p.running) p.child.kill('SIGKILL');
    }
  }
}

module.exports = { ChaosInstance };
