import { createHash } from 'node:crypto';
import type { RunNodeRecord } from '@erg/db';
import { fingerprintClass, type NodeFingerprint } from '@erg/spec';

/**
 * What a campaign's results compare of the machines its runs ran on: each run's fingerprint class
 * (the kind of machine, without node names or GPU UUIDs: see @erg/spec node-info) and every
 * class's fields flattened to text, so that @erg/energy can say how two kinds differ
 * ("driverVersion: 550.54.15 (2 runs) vs 535.104.05 (1 run)").
 */

/** A fingerprint class's fields as text, keyed by their path (`gpus[0].name`, `workload.gitCommit`). */
export function flattenClass(f: NodeFingerprint): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (value: unknown, path: string) => {
    if (Array.isArray(value)) {
      if (value.length === 0) out[path] = '(none)';
      // Modules are one list of names; GPUs are objects, one path per field.
      else if (value.every((v) => typeof v !== 'object' || v === null)) out[path] = value.join(' ');
      else value.forEach((v, i) => walk(v, `${path}[${i}]`));
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
    } else out[path] = value === null ? '(unknown)' : String(value);
  };
  walk(fingerprintClass(f), '');
  return out;
}

/**
 * One id per run for the kind of machine it ran on: its nodes' class when they share one, else an
 * id of the set of classes (its fields then read "a + b" where the nodes differ). Null for a run
 * whose agents sent no fingerprint (older agents, imports).
 */
export function runFingerprintClasses(runNodes: ReadonlyMap<string, readonly RunNodeRecord[]>): {
  byRun: Map<string, string | null>;
  classes: Map<string, Record<string, string>>;
} {
  const byRun = new Map<string, string | null>();
  const classes = new Map<string, Record<string, string>>();
  for (const [runId, nodes] of runNodes) {
    const own = new Map<string, NodeFingerprint>();
    for (const n of nodes) if (n.fingerprint && n.fingerprintClassId) own.set(n.fingerprintClassId, n.fingerprint);
    if (own.size === 0) {
      byRun.set(runId, null);
      continue;
    }
    const ids = [...own.keys()].sort();
    const id = ids.length === 1 ? ids[0]! : createHash('sha256').update(ids.join(',')).digest('hex');
    byRun.set(runId, id);
    if (!classes.has(id)) classes.set(id, combine([...own.values()].map(flattenClass)));
  }
  return { byRun, classes };
}

function combine(parts: Record<string, string>[]): Record<string, string> {
  if (parts.length === 1) return parts[0]!;
  const out: Record<string, string> = {};
  const keys = [...new Set(parts.flatMap((p) => Object.keys(p)))].sort();
  for (const k of keys) out[k] = [...new Set(parts.map((p) => p[k] ?? '(none)'))].join(' + ');
  return out;
}
