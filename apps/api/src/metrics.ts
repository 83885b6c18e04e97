import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { withinDeadline } from '@erg/queue';
import type { Queue } from 'bullmq';
import { countRunsByClusterAndState, listClusterCertificates, type Database } from '@erg/db';
import { certificateStatus, DEFAULT_CERTIFICATE_WARNING, parseCertificate, type CertificateWarningPolicy } from '@erg/slurm';
import { RunState } from '@erg/spec';

/**
 * The API's Prometheus metrics, in one registry per app instance: tests build several apps in
 * one process, and prom-client's global registry would refuse the second set of names.
 * Labels stay low-cardinality on purpose — never a run or campaign id.
 */
export interface ApiMetrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  telemetrySamples: Counter;
  telemetryBatches: Counter<'outcome'>;
  telemetryIngest: Histogram;
  /** GET /v1/campaigns/{id}/results answers by where they came from (results-reader.ts ResultsSource). */
  campaignResults: Counter<'source'>;
  resultsInputs: Counter<'read'>;
}

/** Where the scrape-time gauges read from; absent sources leave their gauge empty (unit tests). */
export interface MetricSources {
  db?: Database;
  queue?: Queue;
  /**
   * Label runs by cluster name (true) or by the cluster's id (false, the default). Names are only
   * for a /metrics that needs ERG_METRICS_TOKEN: an open one must not tell anyone which clusters
   * erg knows, while ids (random UUIDs) say nothing about them.
   */
  clusterNames?: boolean;
  /** When certificates start to warn (ApiConfig ERG_CERTIFICATE_WARNING_*); default 24 h or the last quarter of the validity. */
  certificateWarning?: CertificateWarningPolicy;
}

/** erg_runs is one GROUP BY over every run; rapid scrapes (several Prometheus replicas) reuse it. */
const RUNS_CACHE_MS = 5000;

/** Runs of import campaigns have no cluster; cluster names and ids never contain parentheses. */
export const NO_CLUSTER = '(none)';

export function createApiMetrics(sources: MetricSources = {}): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'erg_api_' });

  const readRunCounts = cached(RUNS_CACHE_MS, () => countRuns(sources.db!, sources.clusterNames ?? false));
  new Gauge({
    name: 'erg_runs',
    help: 'Runs by state and cluster (its id, or its name when /metrics needs ERG_METRICS_TOKEN), counted in Postgres at scrape time (cached 5 s)',
    labelNames: ['cluster', 'state'],
    registers: [registry],
    async collect() {
      if (!sources.db) return;
      const rows = await readRunCounts();
      this.reset();
      // Every state of every cluster seen, zeros included: a state that empties shows 0, not a gap.
      const clusters = new Set(rows.map((r) => r.cluster));
      for (const cluster of clusters) for (const state of RunState.options) this.set({ cluster, state }, 0);
      for (const r of rows) this.set({ cluster: r.cluster, state: r.state }, r.n);
    },
  });

  // One read of every cluster's certificates serves both gauges of a scrape.
  const readCertificates = cached(RUNS_CACHE_MS, () => certificateSeries(sources.db!, sources.clusterNames ?? false, sources.certificateWarning ?? DEFAULT_CERTIFICATE_WARNING));
  new Gauge({
    name: 'erg_cluster_certificate_expiry_seconds',
    help: "Seconds until an OpenSSH certificate erg logs in with expires (negative: expired, erg no longer connects), by cluster and hop (login, jump1, jump2, …); certificates valid forever are left out",
    labelNames: ['cluster', 'hop'],
    registers: [registry],
    async collect() {
      if (!sources.db) return;
      const series = await readCertificates();
      this.reset();
      for (const s of series) if (s.expiresInS !== null) this.set({ cluster: s.cluster, hop: s.hop }, s.expiresInS);
    },
  });
  new Gauge({
    name: 'erg_cluster_certificate_warning',
    help: '1 while a certificate erg logs in with is in its warning window (ERG_CERTIFICATE_WARNING_S / _SHARE) or expired, else 0; by cluster and hop',
    labelNames: ['cluster', 'hop'],
    registers: [registry],
    async collect() {
      if (!sources.db) return;
      const series = await readCertificates();
      this.reset();
      for (const s of series) this.set({ cluster: s.cluster, hop: s.hop }, s.warning ? 1 : 0);
    },
  });

  new Gauge({
    name: 'erg_queue_jobs',
    help: "Jobs in the scheduler's BullMQ queue by state (waiting, active, delayed, failed, prioritized, …)",
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      if (!sources.queue) return;
      // Left out of this scrape while Redis is away, rather than holding the scrape until it is back.
      const counts = await withinDeadline(sources.queue.getJobCounts()).catch(() => null);
      if (!counts) return;
      this.reset();
      for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
    },
  });

  return {
    registry,
    httpDuration: new Histogram({
      name: 'erg_http_request_duration_seconds',
      help: 'API request duration by route pattern (not URL), method and status code',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    telemetrySamples: new Counter({
      name: 'erg_telemetry_samples_total',
      help: 'Telemetry samples accepted and stored (duplicates of stored batches not counted)',
      registers: [registry],
    }),
    telemetryBatches: new Counter({
      name: 'erg_telemetry_batches_total',
      help: 'Telemetry batches received, by outcome: stored, duplicate (seen before), rejected (invalid)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    telemetryIngest: new Histogram({
      name: 'erg_telemetry_ingest_seconds',
      help: 'Time from a telemetry request arriving to its batch committed in Postgres',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    campaignResults: new Counter({
      name: 'erg_campaign_results_total',
      help:
        'Campaign results answered, by source: cache (kept, nothing they depend on changed since), joined (the same results another request was computing), ' +
        'worker (computed in a results worker thread), inline (computed on the event loop: no worker available)',
      labelNames: ['source'],
      registers: [registry],
    }),
    resultsInputs: new Counter({
      name: 'erg_results_inputs_read_total',
      help: 'Campaign results computed in a results worker, by how their inputs were read: whole (the worker kept nothing of the campaign, or too much changed) or changes (only the runs that changed since its last read).',
      labelNames: ['read'],
      registers: [registry],
    }),
  };
}

async function countRuns(db: Database, byName: boolean): Promise<{ cluster: string; state: string; n: number }[]> {
  const rows = await countRunsByClusterAndState(db, byName ? 'name' : 'id');
  return rows.map((r) => ({ ...r, cluster: r.cluster ?? NO_CLUSTER }));
}

/**
 * Every certificate of every cluster, one series each: the login node's (`login`) and each jump
 * host's (`jump1` first): positions, not host names, which an open /metrics must not tell.
 */
async function certificateSeries(db: Database, byName: boolean, policy: CertificateWarningPolicy) {
  const now = new Date();
  const out: { cluster: string; hop: string; expiresInS: number | null; warning: boolean }[] = [];
  for (const c of await listClusterCertificates(db)) {
    const hops = [{ hop: 'login', text: c.certificate }, ...c.jumpHosts.map((j, i) => ({ hop: `jump${i + 1}`, text: j.certificate }))];
    for (const { hop, text } of hops) {
      const parsed = text ? parseCertificate(text) : null;
      if (!parsed?.ok) continue;
      const cert = parsed.certificate;
      const status = certificateStatus(cert, now, policy);
      out.push({
        cluster: byName ? c.name : c.id,
        hop,
        expiresInS: cert.validBefore ? Math.round((cert.validBefore.getTime() - now.getTime()) / 1000) : null,
        warning: status === 'expiring' || status === 'expired',
      });
    }
  }
  return out;
}

/** `fn`'s last answer for `ms`; concurrent callers share one call in flight. */
function cached<T>(ms: number, fn: () => Promise<T>): () => Promise<T> {
  let value: { at: number; promise: Promise<T> } | null = null;
  return () => {
    if (value && Date.now() - value.at < ms) return value.promise;
    const promise = fn();
    value = { at: Date.now(), promise };
    // A failed query is not cached: the next scrape asks again.
    promise.catch(() => {
      if (value?.promise === promise) value = null;
    });
    return value.promise;
  };
}
