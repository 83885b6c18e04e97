// The chaos suite's printed report: the ledger of both campaigns side by side, the faults as
// they happened, and every anomaly with the fault that most likely caused it.
'use strict';

function table(rows) {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)));
  return rows.map((r) => r.map((cell, c) => String(cell).padEnd(widths[c])).join('  ').trimEnd()).join('\n');
}

const secs = (s) => (s === null || s === undefined ? '—' : `${s} s`);

function outage(api) {
  const per = Object.entries(api.perProcessS).map(([name, s]) => `${name} ${s} s`).join(', ');
  return `${per}; none answering ${api.noneAnsweringS} s`;
}

/** The whole report as text. */
function formatReport(result) {
  const { baseline, chaos, targets } = result;
  const col = (f) => [baseline ? f(baseline) : '—', f(chaos)];
  const energy = (c) => `${c.ledger.withEnergy}/${c.ledger.completed}${Object.keys(c.ledger.energyMethods).length ? ` (${Object.entries(c.ledger.energyMethods).map(([m, n]) => `${m} ${n}`).join(', ')})` : ''}`;
  const mark = (ok) => (ok === null ? '' : ok ? 'ok' : 'MISSED');
  const ratio = result.ratio === null ? '' : `${result.ratio}× fault-free`;
  const lines = [];
  lines.push(`erg chaos suite — seed ${result.seed}${result.quick ? ' (quick)' : ''}, ${result.runs} runs + ${result.slowRuns} on the 4 s sbatch door, 2 API + 3 scheduler processes`);
  lines.push('');
  lines.push(table([
    ['', 'fault-free', 'with faults', 'target'],
    ['runs', ...col((c) => c.ledger.runs), ''],
    ['lost', ...col((c) => c.ledger.lost), `0 ${mark(targets.noneLost)}`],
    ['duplicated (runs with >1 Slurm job)', ...col((c) => c.ledger.duplicated), `0 ${mark(targets.noneDuplicated)}`],
    ['orphaned (Slurm jobs erg does not record)', ...col((c) => c.ledger.orphaned), `0 ${mark(targets.noneOrphaned)}`],
    ['completed', ...col((c) => c.ledger.completed), ''],
    ['ended otherwise (failed, timeout, …)', ...col((c) => c.ledger.endedOtherwise), ''],
    ['completed with energy', ...col(energy), `all ${mark(targets.everyCompletedWithEnergy)}`],
    ['longest API outage', ...col((c) => outage(c.api)), ''],
    ['time to finish', ...col((c) => secs(c.timeToFinishS)), `≤ 1.5× ${ratio} ${mark(targets.within1_5xFaultFree)}`.trim()],
  ]));
  lines.push('');
  lines.push('faults (at: seconds after the campaign was submitted)');
  lines.push(table([
    ['#', 'planned', 'at', 'fault', 'target', 'what happened'],
    ...chaos.faults.map((f) => [
      f.n, `${(f.plannedMs / 1000).toFixed(1)}`, f.atMs === null ? 'never' : (f.atMs / 1000).toFixed(1), f.kind, f.target ?? '—',
      `${f.detail ?? ''}${f.restoredMs ? `; back at ${(f.restoredMs / 1000).toFixed(1)}` : ''}`,
    ]),
  ]));
  if (result.unexpectedExits.length > 0) {
    lines.push('');
    lines.push('processes that died without being killed (restarted by the supervisor after 1 s)');
    for (const e of result.unexpectedExits) lines.push(`  ${e.process} pid ${e.pid}: code ${e.code}, signal ${e.signal}`);
  }
  const d = chaos.ledger.details;
  const anomalies = [
    ...d.lost.map((x) => `lost        run ${x.runId}: ${x.state}, job ${x.slurmJobId ?? '—'}, Slurm jobs [${x.jobs.join(' ')}], its last change at ${x.lastChangeS} s, the campaign's at ${x.campaignLastChangeS} s; likely cause ${x.likelyCause}${x.reason ? ` (${x.reason})` : ''}`),
    ...d.duplicated.map((x) => `duplicated  run ${x.runId}: records ${x.recorded ?? '—'}, Slurm has ${x.jobs.map((j) => `${j.jobId} ${j.state} @${j.submittedS} s`).join(', ')}; likely cause ${x.likelyCause}`),
    ...d.orphaned.map((x) => `orphaned    job ${x.jobId} (${x.state}, submitted at ${x.submittedS} s) of run ${x.runId}, which records ${x.recorded ?? '—'}; likely cause ${x.likelyCause}`),
    ...d.endedOtherwise.map((x) => `ended ${x.state.padEnd(6)} run ${x.runId} at ${x.endedS} s: ${x.reason ?? 'no reason recorded'}; likely cause ${x.likelyCause}`),
  ];
  if (anomalies.length > 0) {
    lines.push('');
    lines.push('anomalies (likely cause: the latest fault before the evidence)');
    for (const a of anomalies.slice(0, 60)) lines.push(`  ${a}`);
    if (anomalies.length > 60) lines.push(`  … and ${anomalies.length - 60} more (see --json)`);
  }
  return lines.join('\n');
}

module.exports = { formatReport };
