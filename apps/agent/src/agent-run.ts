import { marksFileName } from '@erg/spec/marks';
import { nowMs, startTicker, type Ticker } from './clock';
import type { AgentConfig } from './config';
import { BatchCloser } from './batch-closer';
import { EVALUATE_EVERY_MS, startCooldownWatch, type CooldownWatch } from './cooldown-watch';
import { sourceCounters, type AgentStats, type DroppedSensor } from './agent-stats';
import { spoolFiles, writeFileAtomic } from './files';
import { errorMessage, type Logger } from './log';
import { MARK_EARLY_SLACK_MS, MarksTail, MarkTimeline } from './marks-tail';
import { nodeInfoMembers, type NodeInfo } from './meta';
import type { Pusher } from './push';
import type { SampleStore } from './samples';
import { Sampler } from './sampler';
import type { ActiveSource, Detection } from './sources';
import type { Spool } from './spool';
import { AGENT_VERSION } from './version';

/** What a started agent has once its sensors are found and its spool is open (see startAgent). */
export interface AgentRunParts {
  config: AgentConfig;
  log: Logger;
  files: ReturnType<typeof spoolFiles>;
  /** Unix ms, and the process's CPU usage, when the agent started. */
  startedAt: number;
  cpuAtStart: NodeJS.CpuUsage;
  detection: Detection;
  /** Filled as sensors drop out, during detection and at run time. */
  droppedSensors: DroppedSensor[];
  spool: Spool;
  /** The bearer token for the API; unused without `config.apiUrl`. */
  token: string;
  /** The node's fingerprint and the helper's power record: sent with the first batch that declares the sensors. */
  nodeInfo: NodeInfo;
}

/**
 * One agent run on one node, from its first sample to its stats: samples on a drift-free schedule,
 * closes a batch every batch window (spooled, then pushed) with the workload's marks read since
 * the last, keeps the spool synced and `.acked` current, and on stop takes a last sample, sends
 * every mark written until then, drains the pusher and writes `.stats.json`.
 */
export class AgentRun {
  private readonly config: AgentConfig;
  private readonly log: Logger;
  private readonly files: ReturnType<typeof spoolFiles>;
  private readonly startedAt: number;
  private readonly cpuAtStart: NodeJS.CpuUsage;
  private readonly store: SampleStore;
  private readonly active: readonly ActiveSource[];
  private readonly droppedSensors: DroppedSensor[];
  private readonly spool: Spool;
  /** Absent when there is no API to push to: the spool alone keeps the batches. */
  private readonly pusher: Pusher | undefined;
  private readonly sampler: Sampler;
  private readonly batches: BatchCloser;
  /** The workload's phase marks (`<node>.marks` beside the spool), read as batches close. */
  private readonly marks: MarksTail;
  /** The campaign's cooldown on this node; null without one, or once its record is written. */
  private readonly cooldown: CooldownWatch | null;
  /** Decides the cooldown at maxWaitS even when no sample is due then (a long --interval-ms). */
  private cooldownDeadline: NodeJS.Timeout | undefined;
  /** Highest seq with every seq ≤ it settled on the server; moved by the pusher, written to `.acked`. */
  private ackedSeq: number;
  /** End of the current batch window (Unix ms): start + m × batchMs. */
  private nextBatchAt: number;
  private ticker: Ticker | undefined;
  /** Spool fsync and `.acked`, once a second. */
  private housekeeping: NodeJS.Timeout | undefined;
  /** Set by the first stop(); later calls get the same promise. */
  private stopping: Promise<AgentStats> | undefined;

  constructor({ config, log, files, startedAt, cpuAtStart, detection, droppedSensors, spool, token, nodeInfo }: AgentRunParts) {
    this.config = config;
    this.log = log;
    this.files = files;
    this.startedAt = startedAt;
    this.cpuAtStart = cpuAtStart;
    this.store = detection.store;
    this.active = detection.active;
    this.droppedSensors = droppedSensors;
    this.spool = spool;
    this.ackedSeq = spool.recovery.ackedSeq;
    this.pusher = config.apiUrl === undefined ? undefined : this.createPusher(config.apiUrl, token);
    this.sampler = new Sampler(this.active, this.store, files.ready, log);
    // A restarted agent reads the marks file again from 0: marks its predecessor read may be much
    // older than this process; the first agent of a node starts before the workload writes any.
    this.marks = new MarksTail(`${config.spoolDir}/${marksFileName(config.node)}`, MarkTimeline.now(), log, {
      ...(spool.recovery.existing === 0 ? { earliestMs: startedAt - MARK_EARLY_SLACK_MS } : {}),
    });
    this.batches = new BatchCloser(config.node, this.store, spool, this.pusher, log, nodeInfoMembers(nodeInfo), this.marks);
    this.cooldown = startCooldownWatch(config.cooldownFile, config.node, this.store, files.cooled, log);
    this.nextBatchAt = startedAt + config.batchMs;
  }

  /** Re-sends what an earlier process left unacknowledged, takes the first sample and starts the timers. */
  start(): void {
    for (const b of this.spool.recovery.unacked) this.pusher?.enqueue(b);
    this.tick();
    this.ticker = startTicker(this.config.intervalMs, () => this.tick());
    this.housekeeping = setInterval(() => this.keepHouse(), 1000);
    if (this.cooldown) this.cooldownDeadline = setTimeout(() => this.checkCooldown(nowMs()), this.cooldown.maxWaitMs + EVALUATE_EVERY_MS);
  }

  /** Takes a last sample, spools and fsyncs it, pushes for at most `drainMs`, writes `.acked` and `.stats.json`. Idempotent. */
  stop(): Promise<AgentStats> {
    return (this.stopping ??= this.finish());
  }

  private createPusher(apiUrl: string, token: string): Pusher {
    // Loaded only when pushing: http/https/zlib cost a few MB of RSS that a spool-only agent need not pay.
    const { Pusher: PusherClass } = require('./push') as typeof import('./push');
    return new PusherClass({
      apiUrl,
      runId: this.config.runId,
      token,
      spool: this.spool,
      log: this.log,
      onSettled: (seq) => {
        this.ackedSeq = seq;
      },
    });
  }

  /** One sampling cycle, and the batch closed when its window ended or it is full. */
  private tick(): void {
    // This must not throw: the ticker would stop and sampling with it.
    try {
      const t = nowMs();
      this.sampler.sample(t);
      this.checkCooldown(t);
      if (t >= this.nextBatchAt || this.store.pendingSamples >= this.config.maxBatchSamples) {
        this.marks.poll();
        this.batches.close();
        this.advanceBatchWindow(t);
      }
    } catch (err) {
      this.log.warnOnce(`tick:${errorMessage(err)}`, 'sampling cycle failed', { error: errorMessage(err) });
    }
  }

  /** The cooldown's check after a sample (or at its deadline); it must not stop the sampling when it fails. */
  private checkCooldown(t: number): void {
    if (!this.cooldown || this.cooldown.done) return;
    try {
      this.cooldown.observe(t);
    } catch (err) {
      this.log.warnOnce(`cooldown:${errorMessage(err)}`, 'cooldown check failed', { error: errorMessage(err) });
    }
  }

  /** Drift-free batch windows: start + m × batchMs, skipping windows that passed unseen. */
  private advanceBatchWindow(t: number): void {
    while (this.nextBatchAt <= t) this.nextBatchAt += this.config.batchMs;
  }

  /** fsync at least every second, and record acknowledgements at the same pace. */
  private keepHouse(): void {
    try {
      this.spool.syncIfDue();
      this.spool.writeAcked(this.ackedSeq);
    } catch (err) {
      this.log.warnOnce(`housekeeping:${errorMessage(err)}`, 'spool upkeep failed', { error: errorMessage(err) });
    }
  }

  private async finish(): Promise<AgentStats> {
    this.ticker?.stop();
    clearInterval(this.housekeeping);
    clearTimeout(this.cooldownDeadline);
    this.closeLastBatches();
    this.spool.sync();
    if (this.pusher) {
      await this.pusher.drain(this.config.drainMs);
      this.pusher.close();
    }
    this.spool.writeAcked(this.ackedSeq);
    await this.stopSources();
    const stats = this.stats(nowMs(), process.cpuUsage(this.cpuAtStart));
    this.spool.close();
    writeFileAtomic(this.files.stats, `${JSON.stringify(stats, null, 2)}\n`, { fsync: true });
    this.log.info('agent stopped', { batches: stats.batches, samples: stats.samples, pushed: stats.pushed, unacked: stats.unacked });
    return stats;
  }

  /**
   * A last sample, and every mark written until now: the file is read to its end and its marks
   * go in batches of MAX_BATCH_MARKS, each with a fresh sample (a batch carries samples). Stops
   * when a batch cannot be spooled: what is left is counted as dropped.
   */
  private closeLastBatches(): void {
    for (;;) {
      this.sampler.sample(nowMs());
      const caughtUp = this.marks.fill();
      if (!this.batches.close() || (caughtUp && this.marks.pending.length === 0)) break;
    }
    this.marks.close();
  }

  private async stopSources(): Promise<void> {
    await Promise.all(
      this.active.map(async ({ source }) => {
        try {
          await source.stop();
        } catch (err) {
          this.log.warn('source stop failed', { source: source.name, error: errorMessage(err) });
        }
      }),
    );
  }

  private stats(stoppedAt: number, cpu: NodeJS.CpuUsage): AgentStats {
    const { config, startedAt, pusher, batches } = this;
    const sourceStats = Object.fromEntries(this.active.map(({ source }) => [source.name, source.stats?.() ?? {}]));
    const counters = sourceCounters(sourceStats);
    const seq = batches.nextSeq;
    const marks = this.marks.stats();
    return {
      agentVersion: AGENT_VERSION,
      node: config.node,
      pid: process.pid,
      startedAt: new Date(startedAt).toISOString(),
      stoppedAt: new Date(stoppedAt).toISOString(),
      durationMs: Math.round(stoppedAt - startedAt),
      intervalMs: config.intervalMs,
      samples: this.store.totalSamples,
      batches: batches.spooled,
      firstSeq: batches.spooled > 0 ? batches.firstSeq : null,
      lastSeq: seq > 0 ? seq - 1 : null,
      ackedSeq: this.ackedSeq,
      pushed: pusher?.stats.pushed ?? 0,
      duplicates: pusher?.stats.duplicates ?? 0,
      rejected: pusher?.stats.rejected ?? 0,
      retries: pusher?.stats.retries ?? 0,
      unacked: pusher ? pusher.backlog : seq - 1 - this.ackedSeq,
      pushStoppedByStatus: pusher?.stats.stoppedBy ?? null,
      cachedRepeats: counters.cachedRepeats,
      missedTicks: this.ticker?.missed ?? 0,
      readErrors: this.sampler.readErrors + counters.readErrors,
      spoolErrors: batches.spoolErrors,
      marksSent: marks.sent,
      marksBadLines: marks.badLines,
      marksDropped: marks.dropped,
      marksCapped: marks.capped,
      droppedSensors: this.droppedSensors,
      fsyncs: this.spool.fsyncs,
      cpuUserMs: Math.round(cpu.user / 1000),
      cpuSystemMs: Math.round(cpu.system / 1000),
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
      sources: sourceStats,
    };
  }
}
