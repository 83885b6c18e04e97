import type { NodeFingerprint, PowerRecord } from '@erg/spec';
import { poolOf, type Database } from './client';

/**
 * The nodes a run's agents reported from (run_nodes) and their provenance: each node's
 * fingerprint (node_fingerprints, one row per distinct content), the power record the node
 * helper printed, and the agent's clock offset from erg's server. Written by the telemetry writer
 * (telemetry.ts) from the batches (and pushes) that carry them.
 */

/** One node of a run, with what its agent said of it. */
export interface RunNodeRecord {
  node: string;
  fingerprintId: string | null;
  /** The fingerprint's class (what it says of the kind of machine, not of the node). */
  fingerprintClassId: string | null;
  fingerprint: NodeFingerprint | null;
  power: PowerRecord | null;
  /** The agent's clock offset from erg's server (ms), a lower bound from its pushes; null: no push carried its clock. */
  clockOffsetMs: number | null;
  /** Pushes that offset is taken over. */
  clockReadings: number;
}

interface RunNodeRow {
  run_id: string;
  node: string;
  fingerprint_id: string | null;
  class_id: string | null;
  data: NodeFingerprint | null;
  power: PowerRecord | null;
  clock_offset_ms: number | null;
  clock_readings: number;
}

function recordOf(row: RunNodeRow): RunNodeRecord {
  return {
    node: row.node, fingerprintId: row.fingerprint_id, fingerprintClassId: row.class_id, fingerprint: row.data, power: row.power,
    clockOffsetMs: row.clock_offset_ms, clockReadings: row.clock_readings,
  };
}

const SELECT = `SELECT n.run_id, n.node, n.fingerprint_id, f.class_id, f.data, n.power, n.clock_offset_ms, n.clock_readings
  FROM run_nodes n LEFT JOIN node_fingerprints f ON f.id = n.fingerprint_id`;

/** A run's nodes, by name. */
export async function listRunNodes(db: Database, runId: string): Promise<RunNodeRecord[]> {
  const { rows } = await poolOf(db).query<RunNodeRow>(`${SELECT} WHERE n.run_id = $1 ORDER BY n.node`, [runId]);
  return rows.map(recordOf);
}

/** The nodes of every run of a campaign, grouped by run id: one query, whatever the number of runs. */
export async function listCampaignRunNodes(db: Database, campaignId: string, runIds?: readonly string[]): Promise<Map<string, RunNodeRecord[]>> {
  const { rows } = await poolOf(db).query<RunNodeRow>(
    `${SELECT} JOIN runs r ON r.id = n.run_id WHERE r.campaign_id = $1${runIds ? ' AND n.run_id = ANY($2::uuid[])' : ''} ORDER BY n.run_id, n.node`,
    runIds ? [campaignId, runIds] : [campaignId],
  );
  const out = new Map<string, RunNodeRecord[]>();
  for (const row of rows) {
    const list = out.get(row.run_id) ?? [];
    list.push(recordOf(row));
    out.set(row.run_id, list);
  }
  return out;
}
