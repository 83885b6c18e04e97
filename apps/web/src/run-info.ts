// What the run page shows besides power and energy: each node's provenance (what exactly was
// measured) and the node helper's power record, from GET /v1/runs/:id's `nodes`; its cooldown
// (the wait before its idle baseline and workload, from `cooldown`); and the power
// state in force, flags and Slurm's figure from /energy. The words are @erg/format's, as in
// `erg run`; here only the rows the page's tables are made of.
import {
  cooldownNodeText, cooldownSummary, fingerprintFacts, fingerprintPrefix, fingerprintSummary, flagLabel, NO_NODE_PROVENANCE, powerRecordRows, powerRecordStatus, type PowerRecordRow,
} from '@erg/format';
import type { Run, RunEnergy } from './types';

export {
  cpuMaxFreqText, fingerprintFacts, fingerprintPrefix, fingerprintSummary, flagLabel, NO_NODE_PROVENANCE, NO_PROVENANCE, NODE_ENERGY_COLUMNS, nodeEnergyRows, POWER_IN_FORCE_COLUMNS, powerInForceRows,
  powerRecordRows, powerRecordStatus, powerRequestedText, powerStateText, runValidityText, slurmEnergyFigure, VALIDITY_COLUMNS, validityRows, type PowerInForceRow, type PowerRecordRow,
} from '@erg/format';

/** One row of the run page's nodes table, and what its details show. */
export interface NodeRow {
  node: string;
  /** The stored fingerprint's first 12 characters; `none` when the agent sent none. */
  fingerprint: string;
  /** The machine in one line, or that the agent sent no provenance. */
  summary: string;
  /** Every fact of the fingerprint, UUIDs included (the page has room; `erg run` needs --verbose); empty without one. */
  facts: [string, string][];
  /** The node helper's record: whether it applied the state and the rows requested / before / applied; null when the campaign set none. */
  power: { ok: boolean; status: string; rows: PowerRecordRow[] } | null;
}

/** The nodes table of a run, one row per node whose agent reported. */
export function nodeRows(run: Pick<Run, 'nodes'>): NodeRow[] {
  return run.nodes.map((n) => ({
    node: n.node,
    fingerprint: fingerprintPrefix(n.fingerprintId),
    summary: n.fingerprint ? fingerprintSummary(n.fingerprint) : NO_NODE_PROVENANCE,
    facts: n.fingerprint ? fingerprintFacts(n.fingerprint, { verbose: true }) : [],
    power: n.power ? { ok: n.power.ok, status: powerRecordStatus(n.power), rows: powerRecordRows(n.power) } : null,
  }));
}

/** `text` as a sentence of its own: capital first letter, full stop. */
export function asSentence(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;
}

/** Whether any node has a power record: the page shows the power-state section only then. */
export function hasPowerRecord(run: Pick<Run, 'nodes'>): boolean {
  return run.nodes.some((n) => n.power !== null);
}

/** The run's flags, readable (`power state mismatch`), in the order the API gives them. */
export function flagLabels(energy: Pick<RunEnergy, 'flags'>): string[] {
  return energy.flags.map(flagLabel);
}

/** The run page's cooldown section: the wait in a sentence and one line per node; null when the campaign has none. */
export function cooldownLines(run: Pick<Run, 'cooldown'>): { reached: boolean; summary: string; nodes: { node: string; reached: boolean; text: string }[] } | null {
  const c = run.cooldown;
  if (!c) return null;
  return { reached: c.reached, summary: asSentence(cooldownSummary(c)), nodes: c.nodes.map((n) => ({ node: n.node, reached: n.reached, text: cooldownNodeText(n) })) };
}
