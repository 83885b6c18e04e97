// One run as `erg run` prints it: what happened to it (state, Slurm job, times), what it was
// measured on (each node's provenance), at which power state (the node helper's record), how long
// it waited for its nodes to cool down (the spec's cooldown), and its
// energy figures with the state in force, Slurm's own figure, and its carbon and cost with what
// they were computed with; what it moved over each kind of link, where its nodes measured it. Pure: the command fetches, this renders; the words shared with the web
// app's run page come from @erg/format.
import {
  cooldownNodeText, cooldownSummary, cpuMaxFreqText, fingerprintFacts, formatByteRate, formatBytes, formatJoulesPerGB, linkKindLabel, fingerprintPrefix, formatCarbon, formatCost, formatEdp, formatEnergy, formatIntensity, formatNumber, formatPercent, formatPower,
  formatTime, NO_NODE_PROVENANCE, NO_PROVENANCE, NODE_ENERGY_COLUMNS, nodeEnergyRows, plural, POWER_IN_FORCE_COLUMNS, powerInForceRows, powerRecordRows, powerRecordStatus, powerRequestedText,
  powerStateText, runValidityText, slurmEnergyFigure, VALIDITY_COLUMNS, validityRows,
} from '@erg/format';
import type { Run, RunEnergy } from '../api-types';
import type { Colors } from '../output/color';
import { renderFields, renderTable, type Column } from '../output/table';

/** The run's energy figures, or why there are none (the API's 409: not ended yet, no telemetry). */
export type RunEnergyAnswer = { figures: RunEnergy } | { figures: null; why: string };

export interface RunReportOptions {
  /** Also GPU UUIDs (they identify cards, not a kind of machine). */
  verbose?: boolean;
}

function indent(text: string, by = 2): string {
  const pad = ' '.repeat(by);
  return text
    .trimEnd()
    .split('\n')
    .map((line) => (line === '' ? line : pad + line))
    .join('\n');
}

/** Red for states that failed, green for completed, yellow for cancelled, as `erg runs` paints them. */
export function paintRunState(state: Run['state'], color: Colors): string {
  if (state === 'completed') return color.green(state);
  if (state === 'cancelled') return color.yellow(state);
  if (['failed', 'timeout', 'node_fail', 'oom'].includes(state)) return color.red(state);
  return state;
}

function summaryFields(run: Run, color: Colors): [string, string][] {
  const task = !run.arrayJobId ? '' : ` (task ${run.arrayTaskId} of array job ${run.arrayJobId})`;
  const job = run.slurmJobId === null ? 'not submitted yet' : `${run.slurmJobId}${task}${run.slurmState ? ` (${run.slurmState})` : ''}`;
  const exit = run.exitCode === null ? '' : `, exit code ${run.exitCode}${run.signal === null ? '' : `, signal ${run.signal}`}`;
  return [
    ['Run', `${run.id} (campaign ${run.campaignName}, ${run.campaignId})`],
    ['State', paintRunState(run.state, color)],
    ...(run.reason === null ? [] : [['Reason', run.reason] as [string, string]]),
    ['Configuration', `${run.configurationKey}, repetition ${run.repetition}`],
    ['Slurm job', `${job}${exit}`],
    ['Partition', run.partition ?? "(Slurm's default)"],
    ['Nodes', run.nodeList ?? 'none allocated yet'],
    ['Submitted', run.submittedAt ?? 'not yet'],
    ['Started', run.startedAt ?? 'not yet'],
    ['Ended', run.endedAt ?? 'not yet'],
    ['Time', run.timeS === null ? 'not measured yet' : formatTime(run.timeS)],
  ];
}

/** The wait before the idle baseline and the workload (the spec's cooldown), per node; null when the run had none. */
function cooldownSection(run: Run, color: Colors): string | null {
  const c = run.cooldown;
  if (!c) return null;
  const summary = cooldownSummary(c);
  return ['Cooldown', `  ${c.reached ? summary : color.yellow(summary)}`, ...c.nodes.map((n) => `  ${cooldownNodeText(n)}`)].join('\n');
}

function provenanceSection(run: Run, options: RunReportOptions): string {
  if (run.nodes.length === 0) return `Provenance\n  ${NO_PROVENANCE}`;
  const blocks = run.nodes.map((n) => {
    if (n.fingerprint === null) return `${n.node}: ${NO_NODE_PROVENANCE}`;
    return `${n.node} (fingerprint ${fingerprintPrefix(n.fingerprintId)})\n${indent(renderFields(fingerprintFacts(n.fingerprint, options)))}`;
  });
  return ['Provenance', ...blocks.map((b) => indent(b))].join('\n');
}

const RECORD_COLUMNS: Column[] = [{ header: 'GPU' }, { header: 'SETTING' }, { header: 'REQUESTED', align: 'right' }, { header: 'BEFORE', align: 'right' }, { header: 'APPLIED', align: 'right' }];

/** The node helper's records; null when no node has one (the campaign set no power state). */
function powerRecordSection(run: Run, color: Colors): string | null {
  const first = run.nodes.find((n) => n.power !== null)?.power;
  if (!first) return null;
  const blocks = run.nodes.map((n) => {
    if (n.power === null) return `${n.node}: ${color.red('no record from the node helper: what was in force there is not known')}`;
    const status = n.power.ok ? powerRecordStatus(n.power) : color.red(powerRecordStatus(n.power));
    const rows = powerRecordRows(n.power).map((r) => [r.target, r.setting, r.requested, r.previous, r.applied]);
    return rows.length === 0 ? `${n.node}: ${status}` : `${n.node}: ${status}\n${indent(renderTable(RECORD_COLUMNS, rows, { header: color.bold }))}`;
  });
  return [`Power state (requested: ${powerStateText(first.requested)})`, ...blocks.map((b) => indent(b))].join('\n');
}

function powerInForce(energy: RunEnergy, color: Colors): string {
  const power = energy.power;
  if (!power) return 'Power in force: not recorded (no power-state sensor on its nodes, and the campaign set no power state)';
  const rows = powerInForceRows(power);
  const columns: Column[] = POWER_IN_FORCE_COLUMNS.map((c) => ({ header: c.header.toUpperCase(), align: c.numeric ? 'right' : 'left' }));
  const lines = [`Power in force (${powerRequestedText(power)})`];
  if (rows.length > 0) lines.push(indent(renderTable(columns, rows.map((r) => POWER_IN_FORCE_COLUMNS.map((c) => r[c.field])), { header: color.bold })));
  else lines.push('  no GPU sensor of the state in force');
  const cpu = cpuMaxFreqText(power);
  if (cpu !== null) lines.push(`  CPU max frequency read back: ${cpu}`);
  return lines.join('\n');
}

type Field = [string, string];

/** The run's gCO2e as the product it is (kWh × PUE × intensity), then where the intensity came from. */
function carbonFields(carbon: RunEnergy['carbon']): Field[] {
  if (!carbon) return [];
  const product = `${formatNumber(carbon.energyKWh)} kWh × PUE ${formatNumber(carbon.pue)} × ${formatIntensity(carbon.gCO2ePerKWh)}`;
  return [
    ['Carbon', `${formatCarbon(carbon.gCO2e)} = ${product}`],
    ['', `intensity: ${carbon.source} — ${carbon.note}`],
  ];
}

/** The run's cost, then each part the cluster prices: node-hours × rate, the site's kWh × rate. */
function costFields(cost: RunEnergy['cost']): Field[] {
  if (!cost) return [];
  const money = (x: number | null) => formatCost(x, cost.currency);
  const parts: Field[] = [];
  if (cost.perNodeHour !== null) {
    parts.push(['', `node time: ${formatNumber(cost.nodeHours)} node-hours (${plural(cost.nodes, 'node')}) × ${money(cost.perNodeHour)} per node-hour = ${money(cost.nodeTimeCost)}`]);
  }
  if (cost.perKWh !== null) {
    parts.push(['', `energy: ${formatNumber(cost.energyKWh)} kWh × PUE ${formatNumber(cost.pue)} × ${money(cost.perKWh)} per kWh = ${money(cost.energyCost)}`]);
  }
  return [['Cost', money(cost.total)], ...parts];
}

function energySection(answer: RunEnergyAnswer, color: Colors): string {
  if (answer.figures === null) return `Energy: no figures yet — ${answer.why}`;
  const e = answer.figures;
  const components = Object.entries(e.components).map(([k, j]) => `${k} ${formatEnergy(j)}`).join(', ');
  const fields: [string, string][] = [
    ['Energy', `${formatEnergy(e.energyJ)} · avg power ${formatPower(e.avgPowerW)} · EDP ${formatEdp(e.edpJs)}`],
    ['Method', `${e.method}${e.method === 'model' ? ' (modelled: no power sensor)' : ''}, coverage ${formatPercent(e.coverage)}`],
    ...(components === '' ? [] : [['Components', components] as [string, string]]),
    ...(e.idle ? [['Idle baseline', `${formatPower(e.idle.powerW)}; net of it ${formatEnergy(e.idle.netEnergyJ)}`] as [string, string]] : []),
    ...carbonFields(e.carbon),
    ...costFields(e.cost),
    ['Slurm energy', slurmEnergyFigure(e.slurmEnergy)],
    ['', e.slurmEnergy.note],
    ['Flags', e.flags.length === 0 ? 'none' : color.yellow(e.flags.join(', '))],
    ...(e.stale ? [['Stale', color.yellow('telemetry arrived after these figures were computed; the scheduler recomputes them at its next tick')] as [string, string]] : []),
  ];
  const lines = ['Energy', indent(renderFields(fields))];
  const perNode = nodeEnergySection(e, color);
  if (perNode) lines.push(indent(perNode));
  if (e.warnings.length > 0) lines.push(`  Warnings (${e.warnings.length}):`, ...e.warnings.map((w) => `    ${w}`));
  lines.push(indent(powerInForce(e, color)));
  const validity = validitySection(e, color);
  if (validity) lines.push(indent(validity));
  return lines.join('\n');
}

/** Each node's share of the run's energy, where the run had more than one node (one node's is the run's). */
function nodeEnergySection(energy: RunEnergy, color: Colors): string | null {
  if (energy.nodes.length < 2) return null;
  const columns: Column[] = NODE_ENERGY_COLUMNS.map((c) => ({ header: c.header.toUpperCase(), align: c.numeric ? 'right' : 'left' }));
  const rows = nodeEnergyRows(energy).map((r) => NODE_ENERGY_COLUMNS.map((c) => r[c.field]));
  return [`Energy per node (${energy.nodes.length} nodes; they add up to the run's)`, indent(renderTable(columns, rows, { header: color.bold }))].join('\n');
}

/** The campaign's validity gates applied to the run: one line, then each gate's worst value; null for figures computed before erg checked them. */
function validitySection(energy: RunEnergy, color: Colors): string | null {
  const v = energy.validity;
  const text = runValidityText(v);
  if (!v || text === null) return null;
  const columns: Column[] = VALIDITY_COLUMNS.map((header, i) => ({ header: header.toUpperCase(), align: i === 2 || i === 3 ? 'right' : 'left' }));
  return [`Validity: ${v.valid ? color.green(text) : color.red(text)}`, indent(renderTable(columns, validityRows(v.checks), { header: color.bold }))].join('\n');
}

const MOVEMENT_COLUMNS: Column[] = [
  { header: 'link' },
  { header: 'bytes', align: 'right' },
  { header: 'rate', align: 'right' },
  { header: 'J/GB', align: 'right' },
  { header: 'links', align: 'right' },
  { header: 'coverage', align: 'right' },
];

/**
 * What the run moved per kind of link over its window, J per GB of its whole energy (the kinds
 * share it: not to be added) and how much of its GPUs' busy time overlapped with transfers; none
 * where its nodes had no data-movement sensor. Per link and per phase: --format json (the API's).
 */
function dataMovementSection(answer: RunEnergyAnswer): string | null {
  const m = answer.figures?.dataMovement;
  if (!m) return null;
  const rows = m.kinds.map((k) => [linkKindLabel(k.kind), formatBytes(k.bytes), formatByteRate(k.meanRateBps), formatJoulesPerGB(k.joulesPerGB), String(k.links), formatPercent(k.coverage)]);
  const lines = ['Data movement', indent(renderTable(MOVEMENT_COLUMNS, rows))];
  if (m.overlap) {
    lines.push(`  GPU busy ${formatTime(m.overlap.busyS)} (GPU-seconds), of which overlapped with transfers ${formatTime(m.overlap.overlappedS)} (${formatPercent(m.overlap.fraction)})`);
  }
  if (m.phases) {
    const kinds = m.kinds.map((k) => k.kind).filter((kind) => m.phases!.some((p) => p.kinds[kind as keyof typeof p.kinds] !== undefined));
    const columns: Column[] = [{ header: 'phase' }, { header: 'energy', align: 'right' }, ...kinds.map((k) => ({ header: linkKindLabel(k), align: 'right' as const }))];
    const phaseRows = m.phases.map((p) => [p.name, formatEnergy(p.energyJ), ...kinds.map((k) => formatBytes(p.kinds[k as keyof typeof p.kinds]?.bytes))]);
    lines.push('  Bytes per phase (inclusive: nested phases included)', indent(renderTable(columns, phaseRows), 4));
  }
  if (m.warnings.length > 0) lines.push(`  Warnings (${m.warnings.length}):`, ...m.warnings.map((w) => `    ${w}`));
  return lines.join('\n');
}

/** The whole report: summary, provenance, power state (when recorded), cooldown (when the campaign has one), energy, data movement (when measured). */
export function runReport(run: Run, energy: RunEnergyAnswer, color: Colors, options: RunReportOptions = {}): string {
  const sections = [
    renderFields(summaryFields(run, color)).trimEnd(), provenanceSection(run, options), powerRecordSection(run, color), cooldownSection(run, color), energySection(energy, color),
    dataMovementSection(energy),
  ];
  return sections.filter((s): s is string => s !== null).join('\n\n') + '\n';
}
