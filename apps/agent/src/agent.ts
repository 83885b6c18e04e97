import fs from 'node:fs';
import { AgentRun } from './agent-run';
import type { AgentStats, DroppedSensor } from './agent-stats';
import { nowMs } from './clock';
import type { AgentConfig } from './config';
import { spoolFiles, writeFileAtomic } from './files';
import { collectFingerprint, startFingerprintProbes } from './fingerprint';
import { errorMessage, type Logger } from './log';
import { agentMeta, type NodeInfo } from './meta';
import { readPowerRecord } from './power-record';
import { detectSources, type Detection } from './sources';
import type { GpuStackIdentity } from './sources/types';
import { Spool } from './spool';
import { ErgError } from '@erg/spec/errors';

// One agent run on one node: detect sensors, take the node's fingerprint, read the power record →
// write meta → sample on a drift-free schedule → every batch window, spool the batch (then push
// it) → on stop, a last sample, drain, stats. startAgent does what comes before the first sample;
// AgentRun does the rest.

export interface AgentHandle {
  /** Takes a last sample, spools and fsyncs it, pushes for at most `drainMs`, writes `.acked` and `.stats.json`. */
  stop(): Promise<AgentStats>;
  readonly files: ReturnType<typeof spoolFiles>;
}

/** Thrown when the agent cannot start (nothing to sample, unreadable token, …); the message says what to fix. */
export class AgentStartError extends ErgError<'ERG_AGENT_START'> {
  constructor(message: string) {
    super('ERG_AGENT_START', message);
  }
}

export async function startAgent(config: AgentConfig, log: Logger): Promise<AgentHandle> {
  const startedAt = nowMs();
  const cpuAtStart = process.cpuUsage();
  fs.mkdirSync(config.spoolDir, { recursive: true });
  const files = spoolFiles(config.spoolDir, config.node);
  // `.ready` means "this agent process is sampling": one left by an earlier process says nothing.
  fs.rmSync(files.ready, { force: true });
  const token = readToken(config);
  // srun and git run while the sensors are detected; each answers within its timeout (fingerprint.ts).
  const probes = startFingerprintProbes(config);

  const droppedSensors: DroppedSensor[] = [];
  const detection = detectSources(config, log, (sensor, reason) => {
    droppedSensors.push({ sensor, reason });
    log.warn('sensor dropped', { sensor, reason });
  });
  const sensors = detection.store.sensors();

  const spool = new Spool(files.spool, files.acked, log);
  const { recovery } = spool;
  if (recovery.existing > 0) {
    log.info('resuming an existing spool', { batches: recovery.existing, nextSeq: recovery.nextSeq, unacked: recovery.unacked.length });
  }
  const nodeInfo: NodeInfo = {
    fingerprint: await collectFingerprint(config, gpuStackOf(detection, log), probes),
    power: readPowerRecord(files.power, log),
  };
  writeFileAtomic(files.meta, `${JSON.stringify(agentMeta(config, startedAt, detection, recovery, nodeInfo), null, 2)}\n`, { fsync: true });

  if (sensors.length === 0) {
    spool.close();
    await Promise.all(detection.active.map(({ source }) => source.stop()));
    throw new AgentStartError(`no sensor found on this node (see ${files.meta} for what was tried)`);
  }
  // Each sensor with what it covers: on a GH200 the NVML counter is the module's (moduleN.energy).
  const scopes = sensors.map((s) => (s.scope ? `${s.sensor} (${s.scope})` : s.sensor));
  log.info('agent started', { node: config.node, sensors: scopes, spool: files.spool, push: config.apiUrl ?? null });
  const { fingerprint, power } = nodeInfo;
  log.info('node fingerprint', {
    driver: fingerprint.driverVersion,
    gpus: fingerprint.gpus.map((g) => g.name),
    powerRecord: power.record ? { found: true, ok: power.record.ok } : { found: false, ...(power.status === 'ignored' ? { ignored: power.reason } : {}) },
  });

  const run = new AgentRun({ config, log, files, startedAt, cpuAtStart, detection, droppedSensors, spool, token, nodeInfo });
  run.start();
  return {
    files,
    stop: () => run.stop(),
  };
}

/** What the GPU source (NVML, else nvidia-smi) says of the GPUs and the driver; null without one. */
function gpuStackOf(detection: Detection, log: Logger): GpuStackIdentity | null {
  for (const { source } of detection.active) {
    if (!source.identity) continue;
    try {
      return source.identity();
    } catch (err) {
      log.warn('GPU identity failed', { source: source.name, error: errorMessage(err) });
    }
  }
  return null;
}

/** The API's bearer token from `--token-file`; '' when the agent does not push. */
function readToken(config: AgentConfig): string {
  if (config.apiUrl === undefined) return '';
  let token: string;
  try {
    token = fs.readFileSync(config.tokenFile as string, 'utf8').trim();
  } catch (err) {
    throw new AgentStartError(`--token-file ${config.tokenFile}: ${errorMessage(err)}`);
  }
  if (token === '') throw new AgentStartError(`--token-file ${config.tokenFile} is empty`);
  return token;
}
