import os from 'node:os';
import type { NodeFingerprint } from '@erg/spec/node-info';
import type { AgentConfig } from './config';
import type { PowerRecordRead } from './power-record';
import type { Detection } from './sources';
import type { SpoolRecovery } from './spool';
import { AGENT_VERSION } from './version';

// `<node>.meta.json`: who sampled what, written (and fsync'd) before the first sample, so that a
// run whose agent found nothing still says what was tried. With it the node's fingerprint and the
// node helper's power record, which the first batch that declares the sensors carries too.

/** What an agent says about its node besides samples. */
export interface NodeInfo {
  fingerprint: NodeFingerprint;
  power: PowerRecordRead;
}

/** The batch members for NodeInfo: `,"fingerprint":{…}` and, when a record was read, `,"power":{…}`. */
export function nodeInfoMembers({ fingerprint, power }: NodeInfo): string {
  return `,"fingerprint":${JSON.stringify(fingerprint)}${power.record ? `,"power":${JSON.stringify(power.record)}` : ''}`;
}

/** The content of meta.json for an agent that started at `startedAt` (Unix ms). */
export function agentMeta(config: AgentConfig, startedAt: number, detection: Detection, recovery: SpoolRecovery, nodeInfo: NodeInfo): Record<string, unknown> {
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
    fingerprint: nodeInfo.fingerprint,
    power: nodeInfo.power.record,
    // absent: no <node>.power.json (the campaign sets no power state); ignored: why.
    powerRecord: nodeInfo.power.status === 'ignored' ? { status: 'ignored', reason: nodeInfo.power.reason } : { status: nodeInfo.power.status },
  };
}
