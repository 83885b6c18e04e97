/**
 * The whole path a run takes, against the real local cluster: render → stage over SFTP → one
 * submit loop → squeue → sacct, with the states and exit codes erg reads back.
 */
import { CampaignSpec } from '@erg/spec';
import { loadLocalCluster, LOOPBACK_ALLOW_HOSTS, uniqueName, waitFor, type LocalCluster } from '@erg/testkit';
import { ClusterConnection, jobNameForRun, renderRunFiles, shellQuote, SlurmClient, type SlurmJob } from '../src';

jest.setTimeout(120_000);

let cluster: LocalCluster;
let conn: ClusterConnection;
let slurm: SlurmClient;
let root: string;
const campaignId = uniqueName('c');
const since = new Date(Date.now() - 60_000);
const submitted: string[] = [];

beforeAll(() => {
  cluster = loadLocalCluster();
  conn = new ClusterConnection({
    host: cluster.host,
    port: cluster.port,
    username: cluster.user,
    privateKey: cluster.privateKey,
    hostKeySha256: cluster.hostKeySha256,
    allowHosts: LOOPBACK_ALLOW_HOSTS,
  });
  slurm = new SlurmClient(conn);
  root = `${cluster.workDir}/slurm-client-e2e/${campaignId}`;
});

afterAll(async () => {
  // Leave nothing running or staged behind, even when a test failed half-way.
  if (submitted.length > 0) await slurm.scancel(submitted).catch(() => undefined);
  await conn.exec(`rm -rf ${shellQuote(root)}`).catch(() => undefined);
  await conn.close();
});

/** Renders and stages one run whose workload is `run`; returns its id, dir and job script path. */
async function stageRun(run: string, parameters: Record<string, string> = { v: 'x' }) {
  const runId = uniqueName('r');
  const runDir = `${root}/${runId}`;
  const spec = CampaignSpec.parse({
    name: 'slurm-client-e2e',
    cluster: 'local',
    parameters: Object.fromEntries(Object.entries(parameters).map(([k, v]) => [k, [v]])),
    resources: { time: '00:02:00', cpusPerTask: 1 },
    run,
  });
  const files = renderRunFiles({
    runId,
    campaignId,
    repetition: 1,
    configKey: Object.entries(parameters).map(([k, v]) => `${k}=${v}`).join(';'),
    parameters,
    spec,
    runDir,
    defaultPartition: cluster.partition,
  });
  await conn.writeFiles(runDir, files);
  return { runId, runDir, script: `${runDir}/job.sh` };
}

async function submit(script: string): Promise<string> {
  const [result] = await slurm.submitMany([script], null);
  if (result?.status !== 'ok') throw new Error(`submit failed: ${JSON.stringify(result)}`);
  submitted.push(result.jobId);
  return result.jobId;
}

/** Waits until sacct reports the job in a terminal state. */
function finished(jobId: string): Promise<SlurmJob> {
  return waitFor(
    async () => {
      const job = (await slurm.sacct(since)).find((j) => j.jobId === jobId);
      return job && job.endTime !== null && job.runState !== 'running' && job.runState !== 'completing' ? job : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 1000, what: `job ${jobId} to finish in sacct` },
  );
}

it('runs a rendered job: squeue sees it under its run name, sacct reports it completed with exit code 0', async () => {
  const { runId, runDir, script } = await stageRun('echo "v={{v}} run=$ERG_RUN_ID param=$ERG_PARAM_v"');
  const jobId = await submit(script);

  const seen = await waitFor(async () => (await slurm.squeue()).find((j) => j.jobId === jobId), {
    timeoutMs: 30_000,
    intervalMs: 500,
    what: `job ${jobId} in squeue`,
  });
  expect(seen).toMatchObject({ name: `erg-${runId}`, runId });

  const job = await finished(jobId);
  expect(job).toMatchObject({ state: 'COMPLETED', runState: 'completed', exitCode: 0, signal: 0 });
  // Right after a short job, slurmdbd can report its JobName as "allocation" for a moment (its
  // record arrives in parts; seen on 22.05), which is why erg matches sacct rows by job id. The
  // name settles to the run's.
  const named = await waitFor(async () => (await slurm.sacct(since)).find((j) => j.jobId === jobId && j.runId === runId), {
    timeoutMs: 30_000,
    intervalMs: 1000,
    what: `sacct to name job ${jobId} ${jobNameForRun(runId)}`,
  });
  expect(named.name).toBe(jobNameForRun(runId));
  expect(job.nodeList).not.toBeNull();
  expect(job.startTime).toBeInstanceOf(Date);

  expect((await conn.readFile(`${runDir}/stdout.log`))?.text).toBe(`v=x run=${runId} param=x\n`);
  const timing = (await conn.readFile(`${runDir}/erg.timing`))?.text ?? '';
  expect(timing).toMatch(/^start_ns=\d+\nend_ns=\d+\nexit_code=0\n$/);
  // --comment carries campaign and run (accounting stores it on this cluster).
  const comment = await conn.exec(`sacct -X -n -P -j ${jobId} -o Comment`);
  expect(comment.stdout.trim()).toBe(`erg:${campaignId}:${runId}`);
});

it('maps a workload that exits 3 to failed with exit code 3', async () => {
  const { runDir, script } = await stageRun('echo about to fail; exit 3');
  const jobId = await submit(script);
  const job = await finished(jobId);
  expect(job).toMatchObject({ state: 'FAILED', runState: 'failed', exitCode: 3 });
  expect((await conn.readFile(`${runDir}/erg.timing`))?.text).toContain('exit_code=3\n');
});

it('maps scancel of a running job to cancelled', async () => {
  const { script } = await stageRun('sleep 120');
  const jobId = await submit(script);
  await waitFor(async () => (await slurm.squeue()).find((j) => j.jobId === jobId && j.runState === 'running'), {
    timeoutMs: 60_000,
    intervalMs: 500,
    what: `job ${jobId} running`,
  });
  await slurm.scancel([jobId]);
  const job = await finished(jobId);
  expect(job).toMatchObject({ state: 'CANCELLED', runState: 'cancelled' });
  // Cancelling again is harmless: the goal is already met.
  await slurm.scancel([jobId]);
});

it('submits a batch in one loop, refusals included, and finds every job by name exactly once', async () => {
  const runs = await Promise.all([stageRun('true'), stageRun('true'), stageRun('true')]);
  const missing = `${root}/does-not-exist/job.sh`;
  const results = await slurm.submitMany([runs[0]!.script, missing, runs[1]!.script, runs[2]!.script], null);
  expect(results.map((r) => r.status)).toEqual(['ok', 'err', 'ok', 'ok']);
  expect(results[1]).toMatchObject({ path: missing, status: 'err' });
  expect((results[1] as { error: string }).error).toContain('Unable to open file');
  for (const r of results) if (r.status === 'ok') submitted.push(r.jobId);

  // What a restarted scheduler does before resubmitting: look the runs up by job name.
  const names = [...runs.map((r) => jobNameForRun(r.runId)), jobNameForRun(uniqueName('never-submitted'))];
  const found = await slurm.findJobsByName(names, { since });
  expect(names.map((n) => found.get(n)?.length)).toEqual([1, 1, 1, 0]);
  const okIds = results.flatMap((r) => (r.status === 'ok' ? [r.jobId] : []));
  expect(runs.map((r) => found.get(jobNameForRun(r.runId))?.[0]?.jobId)).toEqual(okIds);
});
