import os from 'node:os';
import type { AgentConfig } from './config';
import type { Detection } from './sources';
import type { SpoolRecovery } from './spool';
import { AGENT_VERSION } from './version';

// `<node>.meta.json`: who sampled what, written (and fsync'd) before the first sample, so that a
// run whose agent found nothing still says what was tried.

/** The content of meta.json for an agent that started at `startedAt` (Unix ms). */
export function agentMeta(config: AgentConfig, startedAt: number, detection: Detection, recovery: SpoolRecovery): Record<string, unknown> {
  return {
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
    sources: detection.active.map(({ source }) => ({ name: source.name, sensors: source.sensors.map((s) => s.sensor), details: source.details })),
    sensors: detection.store.sensors(),
    // Per source: why it is absent, or what it left out (unsupported GPU fields, unreadable zones, …).
    notes: detection.notes,
    ...(detection.shadowed.length > 0 ? { shadowed: detection.shadowed } : {}),
    resumedAtSeq: recovery.existing > 0 ? recovery.nextSeq : null,
  };
}
