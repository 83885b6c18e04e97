import fs from 'node:fs';
import os from 'node:os';
import { nowMs, startTicker, type Ticker } from './clock';
import type { AgentConfig } from './config';
import { spoolFiles, writeFileAtomic } from './files';
import { errorMessage, type Logger } from './log';
import type { Pusher as PusherType } from './push';
import { detectSources, type Detection } from './sources';
import { Spool } from './spool';
import { AGENT_VERSION } from './version';

// One agent run on one node: detect sensors → write meta → sample on a drift-free schedule →
// every batch window, spool the batch (then push it) → on stop, a last sample, drain, stats.

export interface AgentHandle {
  /** Takes a last sample, spools and fsyncs it, pushes for at most `drainMs`, writes `.acked` and `.stats.json`. */
  stop(): Promise<AgentStats>;
  readonly files: ReturnType<typeof spoolFiles>;
}

export interface AgentStats {
  agentVersion: string;
  node: string;
  pid: number;
  startedAt: string;
  stoppedAt: string;
  durationMs: number;
  intervalMs: number;
  samples: number;
  /** Batches this process spooled. */
  batches: number;
  firstSeq: number | null;
  lastSeq: number | null;
  /** Highest seq with every seq ≤ it settled on the server (-1: none). */
  ackedSeq: number;
  pushed: number;
  duplicates: number;
  rejected: number;
  retries: number;
  /** Unacknowledged batches left in the spool at exit. */
  unacked: number;
  pushStoppedByStatus: number | null;
  cachedRepeats: number;
  missedTicks: number;
  readErrors: number;
  /** Batches lost because the spool could not be written. */
  spoolErrors: number;
  droppedSensors: { sensor: string; reason: string }[];
  fsyncs: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  maxRssBytes: number;
  sources: Record<string, unknown>;
}

/** Thrown when the agent cannot start (nothing to sample, unreadable token, …); the message says what to fix. */
export class AgentStartError extends Error {
  readonly code = 'ERG_AGENT_START';
}

export async function startAgent(config: AgentConfig, log: Logger): Promise<AgentHandle> {
  const startedAt = nowMs();
  const cpuAtStart = process.cpuUsage();
  fs.mkdirSync(config.spoolDir, { recursive: true });
  const files = spoolFiles(config.spoolDir, config.node);
  // `.ready` means "this agent process is sampling": one left by an earlier process says nothing.
  fs.rmSync(files.ready, { force: true });

  let token = '';
  if (config.apiUrl !== undefined) {
    try {
      token = fs.readFileSync(config.tokenFile as string, 'utf8').trim();
    } catch (err) {
      throw new AgentStartError(`--token-file ${config.tokenFile}: ${errorMessage(err)}`);
    }
    if (token === '') throw new AgentStartError(`--token-file ${config.tokenFile} is empty`);
  }

  const dropped: { sensor: string; reason: string }[] = [];
  const detection: Detection = detectSources(config, log, (sensor, reason) => {
    dropped.push({ sensor, reason });
    log.warn('sensor dropped', { sensor, reason });
  });
  const { store, active } = detection;
  const sensors = store.sensors();

  const spool = new Spool(files.spool, files.acked, log);
  const { recovery } = spool;
  if (recovery.existing > 0) {
    log.info('resuming an existing spool', { batches: recovery.existing, nextSeq: recovery.nextSeq, unacked: recovery.unacked.length });
  }

  writeFileAtomic(
    files.meta,
    `${JSON.stringify(
      {
        agentVersion: AGENT_VERSION,
        node: config.node,
        runId: config.runId,
        pid: process.pid,
        hostname: os.hostname(),
        startTime: new Date(startedAt).toISOString(),
        startTimeMs: startedAt,
        intervalMs: config.intervalMs,
        batchMs: config.batchMs,
        nodeVersion: process.version,
        platform: `${process.platform}-${process.arch}`,
        sources: active.map(({ source }) => ({ name: source.name, sensors: source.sensors.map((s) => s.sensor), details: source.details })),
        sensors,
        // Per source: why it is absent, or what it left out (unsupported GPU fields, unreadable zones, …).
        notes: detection.notes,
        ...(detection.shadowed.length > 0 ? { shadowed: detection.shadowed } : {}),
        resumedAtSeq: recovery.existing > 0 ? recovery.nextSeq : null,
      },
      null,
      2,
    )}\n`,
    { fsync: true },
  );

  if (sensors.length === 0) {
    spool.close();
    await Promise.all(active.map(({ source }) => source.stop()));
    throw new AgentStartError(`no sensor found on this node (see ${files.meta} for what was tried)`);
  }
  log.info('agent started', { node: config.node, sensors: sensors.map((s) => s.sensor), spool: files.spool, push: config.apiUrl ?? null });

  let ackedSeq = recovery.ackedSeq;
  // Loaded only when pushing: http/https/zlib cost a few MB of RSS that a spool-only agent need not pay.
  const pusher: PusherType | undefined =
    config.apiUrl === undefined
      ? undefined
      : new (require('./push') as typeof import('./push')).Pusher({
          apiUrl: config.apiUrl,
          runId: config.runId,
          token,
          spool,
          log,
          onSettled: (seq) => {
            ackedSeq = seq;
          },
        });
  for (const b of recovery.unacked) pusher?.enqueue(b);

  let seq = recovery.nextSeq;
  const firstSeq = seq;
  let batches = 0;
  // The first batch of every agent process carries the sensor set, and so does any batch after it changed.
  let sentVersion = -1;
  let ready = false;
  let readErrors = 0;

  let spoolErrors = 0;
  const closeBatch = () => {
    const line = store.takeBatch(config.node, seq, store.version !== sentVersion);
    if (line === null) return;
    // The batch is on disk (appended; fsync'd within a second) before it is ever sent.
    let spooled;
    try {
      spooled = spool.append(seq, line);
    } catch (err) {
      // Disk full or gone: this batch is lost (and said so); sampling goes on and the next batch
      // takes the same seq, so the spool stays gap-free.
      spoolErrors += 1;
      log.error('spool append failed; batch lost', { seq, error: errorMessage(err) });
      return;
    }
    sentVersion = store.version;
    seq += 1;
    batches += 1;
    pusher?.enqueue(spooled);
  };

  const sample = (t: number) => {
    for (const { source, sink } of active) {
      try {
        source.read(t, sink);
      } catch (err) {
        readErrors += 1;
        log.warnOnce(`read:${source.name}:${errorMessage(err)}`, 'source read failed', { source: source.name, error: errorMessage(err) });
      }
    }
    if (!ready && store.totalSamples > 0) {
      ready = true;
      writeFileAtomic(files.ready, `${JSON.stringify({ pid: process.pid, t })}\n`);
    }
  };

  let nextBatchAt = startedAt + config.batchMs;
  const tick = () => {
    // This must not throw: the ticker would stop and sampling with it.
    try {
      const t = nowMs();
      sample(t);
      if (t >= nextBatchAt || store.pendingSamples >= config.maxBatchSamples) {
        closeBatch();
        // Drift-free batch windows: start + m × batchMs, skipping windows that passed unseen.
        while (nextBatchAt <= t) nextBatchAt += config.batchMs;
      }
    } catch (err) {
      log.warnOnce(`tick:${errorMessage(err)}`, 'sampling cycle failed', { error: errorMessage(err) });
    }
  };

  tick();
  const ticker: Ticker = startTicker(config.intervalMs, tick);
  // fsync at least every second, and record acknowledgements at the same pace.
  const housekeeping = setInterval(() => {
    try {
      spool.syncIfDue();
      spool.writeAcked(ackedSeq);
    } catch (err) {
      log.warnOnce(`housekeeping:${errorMessage(err)}`, 'spool upkeep failed', { error: errorMessage(err) });
    }
  }, 1000);

  let stopping: Promise<AgentStats> | undefined;
  const stop = async (): Promise<AgentStats> => {
    ticker.stop();
    clearInterval(housekeeping);
    sample(nowMs());
    closeBatch();
    spool.sync();
    if (pusher) {
      await pusher.drain(config.drainMs);
      pusher.close();
    }
    spool.writeAcked(ackedSeq);
    await Promise.all(
      active.map(async ({ source }) => {
        try {
          await source.stop();
        } catch (err) {
          log.warn('source stop failed', { source: source.name, error: errorMessage(err) });
        }
      }),
    );
    const stoppedAt = nowMs();
    const cpu = process.cpuUsage(cpuAtStart);
    const sourceStats = Object.fromEntries(active.map(({ source }) => [source.name, source.stats?.() ?? {}]));
    const hwmonStats = sourceStats.hwmon as { cachedRepeats?: number } | undefined;
    const sourceReadErrors = Object.values(sourceStats).reduce<number>((s, x) => s + (Number((x as { readErrors?: number }).readErrors) || 0), 0);
    const stats: AgentStats = {
      agentVersion: AGENT_VERSION,
      node: config.node,
      pid: process.pid,
      startedAt: new Date(startedAt).toISOString(),
      stoppedAt: new Date(stoppedAt).toISOString(),
      durationMs: Math.round(stoppedAt - startedAt),
      intervalMs: config.intervalMs,
      samples: store.totalSamples,
      batches,
      firstSeq: batches > 0 ? firstSeq : null,
      lastSeq: seq > 0 ? seq - 1 : null,
      ackedSeq,
      pushed: pusher?.stats.pushed ?? 0,
      duplicates: pusher?.stats.duplicates ?? 0,
      rejected: pusher?.stats.rejected ?? 0,
      retries: pusher?.stats.retries ?? 0,
      unacked: pusher ? pusher.backlog : seq - 1 - ackedSeq,
      pushStoppedByStatus: pusher?.stats.stoppedBy ?? null,
      cachedRepeats: hwmonStats?.cachedRepeats ?? 0,
      missedTicks: ticker.missed,
      readErrors: readErrors + sourceReadErrors,
      spoolErrors,
      droppedSensors: dropped,
      fsyncs: spool.fsyncs,
      cpuUserMs: Math.round(cpu.user / 1000),
      cpuSystemMs: Math.round(cpu.system / 1000),
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
      sources: sourceStats,
    };
    spool.close();
    writeFileAtomic(files.stats, `${JSON.stringify(stats, null, 2)}\n`, { fsync: true });
    log.info('agent stopped', { batches, samples: stats.samples, pushed: stats.pushed, unacked: stats.unacked });
    return stats;
  };

  return {
    files,
    stop: () => (stopping ??= stop()),
  };
}
