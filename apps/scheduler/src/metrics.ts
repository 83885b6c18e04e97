import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { SlurmCommandError } from '@erg/slurm';
import { sshErrorKind } from './ssh-errors';

/**
 * The scheduler's Prometheus metrics, in a registry of its own (tests run a scheduler beside an
 * API in one process). Labels are low-cardinality: cluster names, states, outcomes — never run
 * or campaign ids, which belong in the logs.
 */
export interface SchedulerMetrics {
  registry: Registry;
  submissions: Counter<'cluster' | 'outcome'>;
  slurmErrors: Counter<'cluster' | 'command'>;
  sshErrors: Counter<'cluster' | 'kind'>;
  cycleDuration: Histogram<'cluster'>;
  runsFinished: Counter<'cluster' | 'state'>;
  suiteRunsJudged: Counter<'status'>;
  webhookDeliveries: Counter<'outcome'>;
}

export function createSchedulerMetrics(): SchedulerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'erg_scheduler_' });
  const registers = [registry];
  return {
    registry,
    submissions: new Counter({
      name: 'erg_submissions_total',
      help: 'Runs by submission outcome: queued (sbatch gave a job id), refused (sbatch refused it), returned (back to pending, to be submitted again)',
      labelNames: ['cluster', 'outcome'],
      registers,
    }),
    slurmErrors: new Counter({
      name: 'erg_slurm_errors_total',
      help: 'Slurm commands that failed on the cluster (non-zero exit), by command',
      labelNames: ['cluster', 'command'],
      registers,
    }),
    sshErrors: new Counter({
      name: 'erg_ssh_errors_total',
      help: 'SSH failures that ended a cycle, by kind (unreachable, auth, host_key_mismatch, timeout, …)',
      labelNames: ['cluster', 'kind'],
      registers,
    }),
    cycleDuration: new Histogram({
      name: 'erg_cycle_duration_seconds',
      help: "One cluster cycle (reconcile, then submit), lock held; cycles skipped because another holds the lock are not observed",
      labelNames: ['cluster'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers,
    }),
    runsFinished: new Counter({
      name: 'erg_runs_finished_total',
      help: 'Runs that reached a terminal state through Slurm, by state',
      labelNames: ['cluster', 'state'],
      registers,
    }),
    suiteRunsJudged: new Counter({
      name: 'erg_suite_runs_judged_total',
      help: 'Suite runs judged against their baseline, by verdict status',
      labelNames: ['status'],
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'erg_webhook_deliveries_total',
      help: 'Suite webhook delivery attempts: delivered, retry (failed, will be tried again), failed (given up)',
      labelNames: ['outcome'],
      registers,
    }),
  };
}

/** squeue/sacct/scancel as SlurmClient names them; its submit loop is "sbatch loop". */
const SLURM_COMMANDS = new Set(['sbatch', 'squeue', 'sacct', 'scancel']);

/** Counts the failure that ended a cluster's cycle under the Slurm or the SSH counter. */
export function countCycleError(metrics: SchedulerMetrics, cluster: string, err: unknown): void {
  if (err instanceof SlurmCommandError) {
    const command = err.command.split(' ')[0]!;
    metrics.slurmErrors.inc({ cluster, command: SLURM_COMMANDS.has(command) ? command : 'other' });
    return;
  }
  const kind = sshErrorKind(err);
  if (kind) metrics.sshErrors.inc({ cluster, kind });
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** What GET /readyz asks: each dependency answers 'ok' or `error: <why>`, within its own bound. */
export interface ReadinessProbes {
  postgres(): Promise<string>;
  redis(): Promise<string>;
}

/**
 * A bare node:http server (Fastify would be overkill) for operators and orchestrators:
 * GET /metrics (Prometheus), GET /healthz (the process answers) and, with probes, GET /readyz
 * (200 when Postgres and Redis answer, else 503 naming which does not: the scheduler keeps
 * running and resumes by itself, but cycles cannot happen meanwhile).
 */
export async function startMetricsServer(registry: Registry, host: string, port: number, probes?: ReadinessProbes): Promise<MetricsServer> {
  const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(`${JSON.stringify(body)}\n`);
  const server: Server = createServer((req, res) => {
    const route = req.method === 'GET' ? (req.url ?? '').split('?')[0] : null;
    if (route === '/metrics') {
      registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
        (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`collecting metrics failed: ${err.message}\n`),
      );
    } else if (route === '/healthz') {
      json(res, 200, { ok: true });
    } else if (route === '/readyz' && probes) {
      void Promise.all([probes.postgres(), probes.redis()]).then(([postgres, redis]) => {
        const ok = postgres === 'ok' && redis === 'ok';
        json(res, ok ? 200 : 503, { ok, postgres, redis });
      });
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found; try GET /metrics, /healthz${probes ? ' or /readyz' : ''}\n`);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
