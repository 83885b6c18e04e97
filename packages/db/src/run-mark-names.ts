import { MAX_PHASE_NAMES_ENV, type BatchMark } from '@erg/spec';
import type pg from 'pg';

/**
 * The cap on a run's distinct mark names (phases and step counters together; issue 27 §1). Every
 * name costs a row in the run's stored figures, in its campaign's per-phase results and in the
 * web app's charts; a workload that names phases after its loop counter (`step_1`, `step_2`, …)
 * would otherwise grow all of them without bound. So a run admits its first `maxNames` names
 * (ERG_MAX_PHASE_NAMES, in the order its marks arrive) and the marks of any later name are not
 * stored. Their batch still is — its samples are the measurement — and the run says so, once, in
 * its warnings.
 *
 * Storage: run_mark_names holds each admitted (run, name). A flush that brings a name the run has
 * not admitted takes the run's advisory transaction lock, counts and inserts under it: concurrent
 * flushes of one run (several nodes' agents, the API and the scheduler's spool pull) admit one
 * after another and never pass the cap between them. A flush whose names are all admitted already
 * — nearly every one — takes no lock.
 */

/** Advisory-lock class of the mark-name cap ('mk'), apart from the cluster leases' ('er', cluster-lease.ts). */
const MARK_NAMES_LOCK_CLASS = 0x6d6b;


/** Marks of one run and node, as a flush stores them. */
export interface NamedMarks {
  runId: string;
  node: string;
  marks: readonly BatchMark[];
}

/**
 * Of `batches` (in a transaction: the locks are held until it ends), the marks whose names their
 * run has admitted, admitting new names while fewer than `maxNames` are; batches keep their order
 * and each its marks' order. A run that loses marks gets its warning (once). `maxNames`: Infinity
 * admits every name (and still records them, so that a lower cap set later counts them).
 */
export async function admitMarkNames<B extends NamedMarks>(client: Pick<pg.PoolClient, 'query'>, batches: readonly B[], maxNames: number): Promise<B[]> {
  // Each run's names, in the order their marks come.
  const wanted = new Map<string, Set<string>>();
  for (const b of batches) {
    if (b.marks.length === 0) continue;
    let names = wanted.get(b.runId);
    if (!names) wanted.set(b.runId, (names = new Set()));
    for (const m of b.marks) names.add(m.name);
  }
  if (wanted.size === 0) return [...batches];

  const admitted = await knownNames(client, wanted);
  const lost = new Map<string, string>(); // run → the first name left out
  for (const runId of [...wanted.keys()].sort()) {
    const fresh = [...wanted.get(runId)!].filter((name) => !admitted.get(runId)?.has(name));
    if (fresh.length === 0) continue;
    // Run ids in sorted order: two flushes that both bring new names of two runs lock them alike.
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MARK_NAMES_LOCK_CLASS, runId]);
    const { rows } = await client.query<{ n: number; known: string[] | null }>(
      `SELECT count(*)::int AS n, array_agg(name) FILTER (WHERE name = ANY($2::text[])) AS known FROM run_mark_names WHERE run_id = $1`,
      [runId, fresh],
    );
    // Under the lock: what another flush admitted before it committed is counted and known now.
    const since = new Set(rows[0]!.known ?? []);
    const room = Math.max(0, maxNames - rows[0]!.n);
    const candidates = fresh.filter((name) => !since.has(name));
    const admit = candidates.slice(0, room);
    if (admit.length > 0) {
      await client.query('INSERT INTO run_mark_names (run_id, name) SELECT $1, name FROM unnest($2::text[]) AS name ON CONFLICT DO NOTHING', [runId, admit]);
    }
    const names = admitted.get(runId) ?? new Set<string>();
    for (const name of [...since, ...admit]) names.add(name);
    admitted.set(runId, names);
    if (candidates.length > admit.length) lost.set(runId, candidates[admit.length]!);
  }
  for (const [runId, first] of lost) await warnOnce(client, runId, maxNames, first);
  if (lost.size === 0) return [...batches];
  return batches.map((b) => (lost.has(b.runId) ? { ...b, marks: b.marks.filter((m) => admitted.get(b.runId)!.has(m.name)) } : b));
}

/** Of each run's names, those it has admitted already: one indexed read for the whole flush. */
async function knownNames(client: Pick<pg.PoolClient, 'query'>, wanted: ReadonlyMap<string, ReadonlySet<string>>): Promise<Map<string, Set<string>>> {
  const runs: string[] = [];
  const names: string[] = [];
  for (const [runId, set] of wanted) {
    for (const name of set) {
      runs.push(runId);
      names.push(name);
    }
  }
  const { rows } = await client.query<{ run_id: string; name: string }>(
    `SELECT k.run_id, k.name FROM run_mark_names k JOIN unnest($1::uuid[], $2::text[]) AS w(run_id, name) ON k.run_id = w.run_id AND k.name = w.name`,
    [runs, names],
  );
  const known = new Map<string, Set<string>>();
  for (const r of rows) {
    let set = known.get(r.run_id);
    if (!set) known.set(r.run_id, (set = new Set()));
    set.add(r.name);
  }
  return known;
}

/** The run's warning that names past the cap were left out; added only if it has none yet. */
async function warnOnce(client: Pick<pg.PoolClient, 'query'>, runId: string, maxNames: number, first: string): Promise<void> {
  const text =
    `the workload marked more than ${maxNames} distinct phase names (${MAX_PHASE_NAMES_ENV}): marks of the names after the first ${maxNames} were not stored, ` +
    `beginning with "${first}"; their time counts toward the phase around them, or as unmarked`;
  await client.query(
    `UPDATE runs SET warnings = warnings || $2::text
     WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM unnest(warnings) AS w WHERE strpos(w, $3) > 0)`,
    [runId, text, `(${MAX_PHASE_NAMES_ENV})`],
  );
}
