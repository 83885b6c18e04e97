import { from as copyFrom } from 'pg-copy-streams';
import { CampaignSpec, type NodeFingerprint, type NormalizedBatch, type TerminalRunState } from '@erg/spec';
import { plainArrayLiteral } from './array-literal';
import { poolOf, prismaOf, withTransaction, type Database } from './client';
import { storeDecisions, type DecisionToStore } from './strategy';

/**
 * `@erg/db/testing`: writes that only tests and benchmarks make. They put rows in states no
 * production path reaches in the time a test has (a token expired, a run ended an hour ago, a
 * secret stored before sealing existed) or measure Postgres itself; they skip the preconditions
 * and events of the state transitions on purpose. Production code imports `@erg/db`, never this.
 */

/** A GH200 node's fingerprint as its agent would send it, on the given driver. */
export function testNodeFingerprint(node: string, driverVersion: string): NodeFingerprint {
  return {
    node, hostname: `${node}.cluster`, kernel: '6.8.0', arch: 'arm64', cpuModel: 'ARM Neoverse-V2', cpuCount: 72,
    gpus: [{ index: 0, name: 'NVIDIA GH200 480GB', uuid: `GPU-${node}-0`, vbios: '96.00.9F.00.01' }],
    driverVersion, cudaVersion: '12.4', nvmlVersion: '12.550.54.15', slurmVersion: 'slurm 24.11.5', container: null, modules: [], workload: null, agentVersion: '0.1.0',
  };
}

/** A one-sample telemetry batch of a node (TelemetryWriter's input), with whatever else `extra` sets (a fingerprint). */
export function testBatch(node: string, seq: number, extra: Partial<NormalizedBatch> = {}): NormalizedBatch {
  return { node, seq, sensors: [], sampleCount: 1, series: [{ sensor: 'gpu0.power', t: Float64Array.from([Date.now() + seq]), v: Float64Array.from([300]) }], ...extra };
}

/** The tests' own databases: one migrated template per migration set, cloned for each test file. */
export { cloneDatabase, ensureTemplateDatabase } from './migrate';

/**
 * A valid campaign spec (defaults applied) for tests that store a campaign straight through
 * createCampaign: what the API would have stored, so that reading it back (readStoredSpec) works.
 */
export function testCampaignSpec(overrides: Record<string, unknown> = {}): CampaignSpec {
  return CampaignSpec.parse({ name: 't', cluster: 'local', run: 'true', ...overrides });
}

/** Sets where a run's files are, as staging would, without claiming or submitting it. */
export async function setRunDir(db: Database, runId: string, runDir: string): Promise<void> {
  await prismaOf(db).run.update({ where: { id: runId }, data: { runDir } });
}

/** Sets a run's idle and workload windows (ns since the epoch), as its job script would have measured them. */
export async function setRunWindows(
  db: Database,
  runId: string,
  windows: { idleStartNs: bigint | null; idleEndNs: bigint | null; workloadStartNs: bigint | null; workloadEndNs: bigint | null },
): Promise<void> {
  await prismaOf(db).run.update({ where: { id: runId }, data: windows });
}

/** Sets a run's job facts as Slurm would have reported them: its node list and when it started and ended. */
export async function setRunJob(db: Database, runId: string, job: { nodeList: string; startedAt: Date; endedAt: Date | null }): Promise<void> {
  await prismaOf(db).run.update({ where: { id: runId }, data: job });
}

/** Replaces a run's warnings. */
export async function setRunWarnings(db: Database, runId: string, warnings: string[]): Promise<void> {
  await prismaOf(db).run.update({ where: { id: runId }, data: { warnings } });
}

/** Ends a run in `state` now, whatever state it was in, with no event: a finished run without a scheduler. */
export async function forceRunEnd(db: Database, runId: string, state: TerminalRunState): Promise<void> {
  await poolOf(db).query(`UPDATE runs SET state = $2, ended_at = now(), finalized_at = now(), updated_at = now() WHERE id = $1`, [runId, state]);
}

/** Moves a run's end (and finalization) `agoMs` into the past. */
export async function backdateRunEnd(db: Database, runId: string, agoMs: number): Promise<void> {
  await poolOf(db).query(
    `UPDATE runs SET ended_at = now() - make_interval(secs => $2::double precision / 1000), finalized_at = now() - make_interval(secs => $2::double precision / 1000) WHERE id = $1`,
    [runId, agoMs],
  );
}

/** Makes an API token expired as of a second ago. */
export async function expireApiToken(db: Database, tokenId: string): Promise<void> {
  await poolOf(db).query(`UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [tokenId]);
}

/** Stores `stored` as the cluster's private key exactly as given: plaintext as before sealing, or another row's ciphertext. */
export async function overwriteClusterPrivateKey(db: Database, clusterId: string, stored: string): Promise<void> {
  await poolOf(db).query('UPDATE clusters SET private_key = $2 WHERE id = $1', [clusterId, stored]);
}

/** Stores `stored` as the suite's webhook secret exactly as given. */
export async function overwriteSuiteWebhookSecret(db: Database, suiteId: string, stored: string): Promise<void> {
  await poolOf(db).query('UPDATE suites SET webhook_secret = $2 WHERE id = $1', [suiteId, stored]);
}

/** Stores `spec` as the campaign's spec exactly as given: a row as an older erg may have left it (readStoredSpec must refuse it, naming the campaign). */
export async function overwriteCampaignSpec(db: Database, campaignId: string, spec: unknown): Promise<void> {
  await poolOf(db).query('UPDATE campaigns SET spec = $2 WHERE id = $1', [campaignId, JSON.stringify(spec)]);
}

/** Stores `wrapAt` as a sensor's declared counter range exactly as given: a row the API stored before it bounded the range (1e308). */
export async function overwriteSensorWrapAt(db: Database, runId: string, sensor: string, wrapAt: number): Promise<void> {
  await poolOf(db).query('UPDATE telemetry_sensors SET wrap_at = $3 WHERE run_id = $1 AND sensor = $2', [runId, sensor, wrapAt]);
}

/** Replaces the cluster's recorded host key fingerprint (the table's checks still apply). */
export async function overwriteClusterHostKey(db: Database, clusterName: string, hostKeySha256: string | null): Promise<void> {
  await poolOf(db).query('UPDATE clusters SET host_key_sha256 = $2 WHERE name = $1', [clusterName, hostKeySha256]);
}

/** Ends a suite run as passed whose webhook was given up after `attempts`, `error` the last error as stored. */
export async function failSuiteRunWebhook(db: Database, suiteRunId: string, outcome: { attempts: number; error: string }): Promise<void> {
  await poolOf(db).query(
    `UPDATE suite_runs SET status = 'pass', finished_at = coalesce(finished_at, now()), webhook_status = 'failed', webhook_attempts = $2,
       webhook_error = $3 WHERE id = $1`,
    [suiteRunId, outcome.attempts, outcome.error],
  );
}

/** Backend pids of this database's connections with this application_name (pg_stat_activity). */
export async function backendPids(db: Database, applicationName: string): Promise<number[]> {
  const rows = await poolOf(db).query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
    [applicationName],
  );
  return rows.rows.map((r) => r.pid);
}

/** Ends a backend as an operator or a crash would (pg_terminate_backend). */
export async function terminateBackend(db: Database, pid: number): Promise<void> {
  await poolOf(db).query('SELECT pg_terminate_backend($1)', [pid]);
}

/** Refreshes the planner's statistics after a bulk load, so a benchmark measures the plans production gets. */
export async function analyzeTables(db: Database): Promise<void> {
  await poolOf(db).query('ANALYZE');
}

/** Bytes a table takes with its indexes and TOAST (pg_total_relation_size). */
export async function relationBytes(db: Database, table: string): Promise<number> {
  const rows = await poolOf(db).query<{ b: string }>(`SELECT pg_total_relation_size($1::regclass)::bigint AS b`, [table]);
  return Number(rows.rows[0]!.b);
}

/** The ingest benchmark's baseline table: one row per sample (run_id, node, sensor, t, v). */
export async function createPlainSamplesTable(db: Database): Promise<void> {
  await poolOf(db).query('CREATE TABLE plain_samples (run_id uuid, node text, sensor text, t double precision, v double precision)');
}

/** Loads `chunks` (tab-separated lines) into the baseline table with a text COPY. */
export async function copyPlainSamples(db: Database, chunks: Iterable<string>): Promise<void> {
  const client = await poolOf(db).connect();
  try {
    await new Promise<void>((resolve, reject) => {
      const stream = client.query(copyFrom('COPY plain_samples FROM STDIN'));
      stream.on('finish', () => resolve());
      stream.on('error', reject);
      const iterator = chunks[Symbol.iterator]();
      const write = (): void => {
        for (let next = iterator.next(); !next.done; next = iterator.next()) {
          if (!stream.write(next.value)) {
            stream.once('drain', write);
            return;
          }
        }
        stream.end();
      };
      write();
    });
  } finally {
    client.release();
  }
}

/** Rows in the baseline table of copyPlainSamples. */
export async function countPlainSamples(db: Database): Promise<number> {
  const rows = await poolOf(db).query<{ n: string }>('SELECT count(*)::bigint AS n FROM plain_samples');
  return Number(rows.rows[0]!.n);
}

/** Stores an adaptive campaign's decision about configuration `key`, as a step of its strategy would (a test's setup). */
export async function decideConfiguration(db: Database, campaignId: string, key: string, decision: Omit<DecisionToStore, 'configurationId'>, runsUsed = 0): Promise<void> {
  const { rows } = await poolOf(db).query<{ id: string }>('SELECT id FROM configurations WHERE campaign_id = $1 AND key = $2', [campaignId, key]);
  if (!rows[0]) throw new Error(`campaign ${campaignId} has no configuration ${key}`);
  await storeDecisions(poolOf(db), campaignId, runsUsed, [{ ...decision, configurationId: rows[0].id }]);
}

/** One run's figures for completeRunsInBulk: its window and constant power; energy = power × time. */
export interface BulkRunFigures {
  runId: string;
  startMs: number;
  timeS: number;
  powerW: number;
}

/**
 * Ends runs completed with figures, many to a statement (COPY-like bulk: `unnest` of array
 * literals), as a benchmark's setup: each run's window, `metrics`, and its stored figures — the
 * `template` (a run's whole stored result, e.g. one refreshRunEnergy computed) with its time,
 * energy, power, EDP, ED²P and window replaced by the run's. No events, no notifications: 100,000
 * runs in seconds, where finishing each through its transition takes minutes.
 */
export async function completeRunsInBulk(db: Database, runs: readonly BulkRunFigures[], metrics: Record<string, number>, template: Record<string, unknown>, chunk = 10_000): Promise<void> {
  for (let from = 0; from < runs.length; from += chunk) {
    const part = runs.slice(from, from + chunk);
    const ids = plainArrayLiteral(part.map((r) => r.runId));
    const starts = plainArrayLiteral(part.map((r) => r.startMs));
    const times = plainArrayLiteral(part.map((r) => r.timeS));
    const powers = plainArrayLiteral(part.map((r) => r.powerW));
    await withTransaction(db, async (client) => {
      await client.query(
        `UPDATE runs SET state = 'completed', metrics = $2::jsonb, finalized_at = now(),
           started_at = to_timestamp(u.s / 1000.0), ended_at = to_timestamp((u.s + u.t * 1000) / 1000.0),
           workload_start_ns = (u.s * 1000000)::bigint, workload_end_ns = ((u.s + u.t * 1000) * 1000000)::bigint
         FROM unnest($1::uuid[], $3::float8[], $4::float8[]) AS u(id, s, t) WHERE runs.id = u.id`,
        [ids, JSON.stringify(metrics), starts, times],
      );
      await client.query(
        `INSERT INTO run_energy (run_id, time_s, energy_j, method, coverage, result, batches_seen)
         SELECT u.id, u.t, u.p * u.t, $5::jsonb->>'method', ($5::jsonb->>'coverage')::float8,
                $5::jsonb || jsonb_build_object('timeS', u.t, 'energyJ', u.p * u.t, 'avgPowerW', u.p, 'edpJs', u.p * u.t * u.t, 'ed2pJs2', u.p * u.t * u.t * u.t,
                                                'window', jsonb_build_object('startMs', u.s, 'endMs', u.s + u.t * 1000)),
                0
         FROM unnest($1::uuid[], $2::float8[], $3::float8[], $4::float8[]) AS u(id, s, t, p)
         ON CONFLICT (run_id) DO UPDATE SET time_s = EXCLUDED.time_s, energy_j = EXCLUDED.energy_j, result = EXCLUDED.result, computed_at = now()`,
        [ids, starts, times, powers, JSON.stringify(template)],
      );
    });
  }
}
