import { z } from 'zod';
import { SENSOR_SCOPES, SENSOR_SOURCES } from './sensors';

// The report `erg-agent doctor --json FILE` writes on a node (apps/agent/src/doctor.ts builds it;
// its type is NodeDoctorReport below, so this schema is the one definition), and the form erg
// stores it in with the cluster (PUT /v1/clusters/{name}/node-report). Every string and list is
// bounded: a report of a node with 8 GPUs and every source is a few KiB; these bounds leave room
// and keep a stored report small (MAX_NODE_REPORT_BYTES).

/** The largest report body taken, bytes (the route's body limit). */
export const MAX_NODE_REPORT_BYTES = 256 * 1024;

const text = (max = 1000) => z.string().max(max);
const list = <T extends z.ZodType>(item: T, max: number) => z.array(item).max(max);
const version = z.string().max(100).nullable();

export const NodeDoctorReport = z
  .object({
    kind: z.literal('erg-node-doctor'),
    version: z.literal(1),
    agentVersion: text(100),
    node: text(255).min(1).describe('the node the doctor ran on (its --node, by default the host name)'),
    time: z.iso.datetime({ offset: true }).describe('when sampling began'),
    seconds: z.number().nonnegative().max(3600),
    intervalMs: z.number().positive().max(3_600_000),
    stack: z.object({ driverVersion: version, nvmlVersion: version, cudaVersion: version, dcgmVersion: version }),
    floors: list(
      z.object({ key: text(100), has: text(), verdict: z.enum(['met', 'missing', 'unknown']), without: text(2000) }),
      100,
    ).describe("the stack's versions judged by erg's driver floors (docs/energy.md)"),
    sources: list(
      z.object({ name: z.enum(SENSOR_SOURCES), sensors: list(z.object({ sensor: text(200), scope: z.enum(SENSOR_SCOPES).optional() }), 2000) }),
      50,
    ),
    notes: z.partialRecord(z.enum(SENSOR_SOURCES), list(text(2000), 100)),
    shadowed: list(z.object({ sensor: text(200), source: z.enum(SENSOR_SOURCES), keptFrom: z.enum(SENSOR_SOURCES) }), 2000),
    counters: list(
      z.object({
        counter: text(200),
        power: text(200).nullable(),
        counterJ: z.number(),
        integratedJ: z.number().nullable(),
        diffPercent: z.number().nullable(),
        agrees: z.boolean().nullable(),
      }),
      500,
    ),
    moduleFit: list(z.object({ index: text(20), checked: z.int().nonnegative(), failed: z.int().nonnegative(), maxRatio: z.number().nullable(), holds: z.boolean() }), 100),
    warnings: list(text(2000), 200),
    problems: list(text(2000), 200).describe('every check that failed, in words; empty: all hold'),
  })
  .meta({ id: 'NodeDoctorReport' });
export type NodeDoctorReport = z.infer<typeof NodeDoctorReport>;

/** A report as erg keeps it with its cluster: the node and when it was taken come from the report. */
export const ClusterNodeReport = z
  .object({
    node: z.string().describe("the node it was taken on (the report's own)"),
    takenAt: z.string().describe('when the doctor began sampling (ISO time)'),
    storedAt: z.string().describe('when erg stored it (ISO time)'),
    report: NodeDoctorReport,
  })
  .meta({ id: 'ClusterNodeReport' });
export type ClusterNodeReport = z.infer<typeof ClusterNodeReport>;
