// What the chaos suite measures, defined in one place (docs/reliability.md § Columns repeats these
// definitions): the health of the API processes over a campaign, and the ledger that compares what
// erg recorded for each run with what Slurm holds for it.
'use strict';
const { TERMINAL_RUN_STATES: TERMINAL } = require('@erg/spec');

/**
 * Polls GET /healthz of every API process every `intervalMs` (each probe given 1 s) and keeps,
 * per process, the spans in which it did not answer 200: a span starts at the first failed
 * probe and ends at the next successful one (or at stop()).
 */
class HealthMonitor {
  constructor(apis, { intervalMs = 100, timeoutMs = 1000 } = {}) {
    this.apis = apis;
    this.intervalMs = intervalMs;
    this.timeoutMs = timeoutMs;
    this.running = false;
    /** name → [{ from, to }] (ms since epoch). */
    this.outages = new Map(apis.map((a) => [a.name, []]));
    this.loops = [];
  }

  start() {
    this.running = true;
    this.startedAt = Date.now();
    this.loops = this.apis.map((api) => this.watch(api));
  }

  async watch(api) {
    const spans = this.outages.get(api.name);
    let down = null;
    while (this.running) {
      const at = Date.now();
      let ok = false;
      try {
        const res = await fetch(`${api.url}/healthz`, { signal: AbortSignal.timeout(this.timeoutMs) });
        ok = res.ok;
        await res.arrayBuffer();
      } catch {
        ok = false;
      }
      if (!ok && down === null) down = { from: at, to: null };
      if (ok && down !== null) {
        down.to = at;
        spans.push(down);
        down = null;
      }
      await new Promise((resolve) => setTimeout(resolve, this.intervalMs));
    }
    if (down !== null) spans.push({ ...down, to: Date.now() });
  }

  /** Stops polling; returns the longest outage per process and the longest with no process answering, in seconds. */
  async stop() {
    this.running = false;
    await Promise.all(this.loops);
    const longest = (spans) => spans.reduce((m, s) => Math.max(m, s.to - s.from), 0) / 1000;
    const perProcess = {};
    for (const [name, spans] of this.outages) perProcess[name] = round(longest(spans), 1);
    const none = [...this.outages.values()].reduce((acc, spans) => intersect(acc, spans));
    return { perProcessS: perProcess, noneAnsweringS: round(longest(none), 1), spans: Object.fromEntries(this.outages) };
  }
}

/** The spans covered by both lists (each sorted, non-overlapping). */
function intersect(a, b) {
  const out = [];
  for (const x of a) {
    for (const y of b) {
      const from = Math.max(x.from, y.from);
      const to = Math.min(x.to, y.to);
      if (to > from) out.push({ from, to });
    }
  }
  return out;
}

function round(x, digits) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/**
 * The ledger of one campaign (docs/reliability.md § Columns):
 * - lost: runs not in an end state when the suite stopped waiting, and runs that ended (other
 *   than failed) without Slurm ever holding a job named after them;
 * - duplicated: runs with more than one Slurm job named after them;
 * - orphaned: Slurm jobs named after a run of the campaign that are not the job the run records;
 * - completed, and of those the runs with energy figures stored (a run_energy row);
 * - ended otherwise: end states other than completed (failed, timeout, …), with their reasons.
 * Each anomaly names the latest fault injected before its evidence (a job's submit time, a run's
 * last state change, for a run that never ended the campaign's last state change): a likely
 * cause, not a proof.
 *
 * @param {{ runs: any[], jobs: import('@erg/slurm').SlurmJob[], faults: { n: number, kind: string, atMs: number | null }[], t0: number }} input
 */
function ledger({ runs, jobs, faults, t0 }) {
  const jobsByRun = new Map(runs.map((r) => [r.id, []]));
  for (const job of jobs) jobsByRun.get(job.runId)?.push(job);
  for (const list of jobsByRun.values()) list.sort((a, b) => (a.submitTime?.getTime() ?? 0) - (b.submitTime?.getTime() ?? 0));
  const since = (date) => (date ? round((new Date(date).getTime() - t0) / 1000, 1) : null);
  const injected = faults.filter((f) => f.atMs !== null).sort((a, b) => a.atMs - b.atMs);
  // Slurm's times have whole seconds: a job submitted in the second a fault began may follow it.
  const cause = (atS) => {
    if (atS === null) return null;
    const before = injected.filter((f) => f.atMs / 1000 <= atS + 1);
    const f = before[before.length - 1];
    return f ? `#${f.n} ${f.kind}` : 'before any fault';
  };

  // A run stuck where it was submitted has no change of its own to date it by: it is dated by
  // the last change of any run of the campaign, the moment the campaign stopped moving.
  const stalledAt = runs.reduce((m, r) => (r.last_event_at && new Date(r.last_event_at) > m ? new Date(r.last_event_at) : m), new Date(0));
  const lost = [];
  const duplicated = [];
  const orphaned = [];
  const endedOtherwise = [];
  let completed = 0;
  let withEnergy = 0;
  const methods = {};
  for (const run of runs) {
    const own = jobsByRun.get(run.id);
    const terminal = TERMINAL.includes(run.state);
    if (!terminal || (run.state !== 'failed' && own.length === 0)) {
      const atS = since(run.last_event_at);
      const stalledS = since(stalledAt);
      lost.push({
        runId: run.id, state: run.state, slurmJobId: run.slurm_job_id, jobs: own.map((j) => j.jobId), reason: run.reason,
        lastChangeS: atS, campaignLastChangeS: stalledS, likelyCause: cause(terminal ? atS : stalledS),
      });
    }
    if (own.length > 1) {
      const atS = since(own[1].submitTime);
      duplicated.push({ runId: run.id, recorded: run.slurm_job_id, jobs: own.map((j) => ({ jobId: j.jobId, state: j.state, submittedS: since(j.submitTime) })), likelyCause: cause(atS) });
    }
    for (const job of own) {
      if (job.jobId !== run.slurm_job_id) {
        const atS = since(job.submitTime);
        orphaned.push({ jobId: job.jobId, runId: run.id, recorded: run.slurm_job_id, state: job.state, submittedS: atS, likelyCause: cause(atS) });
      }
    }
    if (run.state === 'completed') {
      completed++;
      if (run.has_energy) {
        withEnergy++;
        methods[run.energy_method] = (methods[run.energy_method] ?? 0) + 1;
      }
    } else if (terminal) {
      const atS = since(run.last_event_at);
      endedOtherwise.push({ runId: run.id, state: run.state, reason: run.reason, endedS: atS, likelyCause: cause(atS) });
    }
  }
  return {
    runs: runs.length,
    lost: lost.length,
    duplicated: duplicated.length,
    orphaned: orphaned.length,
    completed,
    withEnergy,
    energyMethods: methods,
    endedOtherwise: endedOtherwise.length,
    details: { lost, duplicated, orphaned, endedOtherwise },
  };
}

module.exports = { HealthMonitor, ledger, intersect, round };
