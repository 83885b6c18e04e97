// The study report's figures, each an SVG with its caption and the numbers it plots as a table
// (a reader of the paper can check them; the tests compare them with the results API). Every
// caption says how many runs each point rests on (n) and what its interval is.
import { entryId, formatBytes, formatEnergy, formatTime, interval, linkKindLabel, measuredConfigurations, parameterNames, parameterText } from '@erg/format';
import { UNMARKED_PHASE } from '@erg/spec';
import type { CampaignResults, ConfigurationResult, Summary } from '../api-types';
import { axes, esc, linearScale, PALETTE, plotRange, px, svgOpen, whisker, type Frame, type Scale } from './svg';

/** One cell of a figure's data table: what is shown, and the exact number behind it (data-value). */
export interface Cell {
  text: string;
  value?: number | null;
}

export interface Figure {
  /** A stable name: the HTML's data-figure attribute and the tests' handle. */
  id: string;
  title: string;
  svg: string;
  caption: string;
  table: { headers: string[]; rows: Cell[][] };
}

/** `a–b` of the runs per entry, or one number when all are equal. */
export function nRange(ns: readonly number[]): string {
  if (ns.length === 0) return '0';
  const lo = Math.min(...ns), hi = Math.max(...ns);
  return lo === hi ? String(lo) : `${lo}–${hi}`;
}

const text = (s: string): Cell => ({ text: s });
const num = (value: number | null | undefined, format: (x: number) => string): Cell => ({ text: value == null ? '—' : format(value), value: value ?? null });
/** The interval's two ends as cells (— when the summary has none). */
function ends(s: Summary, format: (x: number) => string): Cell[] {
  const ci = interval(s.ci95);
  return ci ? [num(ci[0], format), num(ci[1], format)] : [text('—'), text('—')];
}

/** A point's label: right of it, or left where it would run past the frame; below it with `below` (neighbours alternate). */
function pointLabel(label: string, cx: number, cy: number, frame: Frame, below = false): string {
  const left = cx + 6 + label.length * 5.5 > frame.right;
  return `<text x="${px(left ? cx - 6 : cx + 6)}" y="${px(below ? cy + 14 : cy - 6)}" font-size="10"${left ? ' text-anchor="end"' : ''}>${esc(label)}</text>`;
}

/** A summary's 95 % interval as an error bar on `scale`, with an arrowhead where the plot's frame cuts it; nothing without an interval. */
function interval95(direction: 'h' | 'v', at: number, scale: Scale, s: Summary, color: string): string {
  const ci = interval(s.ci95);
  if (!ci) return '';
  const [d0, d1] = scale.domain;
  return whisker(direction, at, scale(ci[0]), scale(ci[1]), color, { a: ci[0] < d0, b: ci[1] > d1 });
}

/** Whether the points are labelled by number (many, or long keys: names would overlap) rather than by key. */
function numbered(keys: readonly string[]): boolean {
  return keys.length > 4 || keys.some((k) => k.length > 24);
}

/**
 * Each configuration's label in every figure: its key where the keys are few and short, else its
 * number — its row in the results table (the measured configurations in the results' order) — the
 * same number in every figure and table of the report.
 */
export function configurationLabels(results: CampaignResults): (key: string) => string {
  const keys = measuredConfigurations(results).map(entryId);
  const index = new Map(keys.map((k, i) => [k, String(i + 1)]));
  return numbered(keys) ? (key) => index.get(key) ?? key : (key) => key;
}

/** Configurations with a mean time and a mean energy: the points of the Pareto plot. */
function plotted(results: CampaignResults): ConfigurationResult[] {
  return measuredConfigurations(results).filter((c) => c.timeS.mean !== null && c.energyJ.mean !== null);
}

/**
 * Mean time against mean energy per configuration, each with its 95 % Student-t intervals as
 * error bars on both axes; the Pareto front (the API's paretoFront, on time and energy) filled
 * and joined by a line, the rest hollow.
 */
export function paretoFigure(results: CampaignResults): Figure | null {
  const points = plotted(results);
  if (points.length === 0) return null;
  const front = new Set(results.paretoFront);
  const onTimeEnergy = results.objectives[0] === 'time' && results.objectives[1] === 'energy';
  const frame: Frame = { width: 640, height: 400, left: 70, right: 620, top: 16, bottom: 350 };
  const lo = (s: Summary) => interval(s.ci95)?.[0] ?? s.mean!;
  const hi = (s: Summary) => interval(s.ci95)?.[1] ?? s.mean!;
  const x = linearScale(plotRange(points.map((c) => c.timeS.mean!), points.flatMap((c) => [lo(c.timeS), hi(c.timeS)])), frame.left, frame.right, { floor: 0 });
  const y = linearScale(plotRange(points.map((c) => c.energyJ.mean!), points.flatMap((c) => [lo(c.energyJ), hi(c.energyJ)])), frame.bottom, frame.top, { floor: 0 });
  const label = configurationLabels(results);
  const parts = [svgOpen(frame, 'Pareto plot: mean time against mean energy per configuration, with 95 % intervals', 'pareto')];
  parts.push(axes(frame, x, y, { x: 'mean time per run', y: 'mean energy per run' }, { x: formatTime, y: formatEnergy }));
  const frontPoints = points.filter((c) => front.has(entryId(c))).sort((a, b) => a.timeS.mean! - b.timeS.mean!);
  if (onTimeEnergy && frontPoints.length > 1) {
    parts.push(`<polyline points="${frontPoints.map((c) => `${px(x(c.timeS.mean!))},${px(y(c.energyJ.mean!))}`).join(' ')}" fill="none" stroke="#D55E00" stroke-width="1.2" stroke-dasharray="4 3"/>`);
  }
  for (const c of points) {
    const cx = x(c.timeS.mean!), cy = y(c.energyJ.mean!);
    const onFront = front.has(entryId(c));
    const color = onFront ? '#D55E00' : '#0072B2';
    parts.push(`<g data-key="${esc(entryId(c))}" data-front="${onFront}">`);
    parts.push(interval95('h', cy, x, c.timeS, color), interval95('v', cx, y, c.energyJ, color));
    parts.push(`<circle cx="${px(cx)}" cy="${px(cy)}" r="4" fill="${onFront ? color : 'white'}" stroke="${color}" stroke-width="1.5"/>`);
    parts.push(`${pointLabel(label(entryId(c)), cx, cy, frame)}</g>`);
  }
  parts.push('</svg>');
  const ns = points.map((c) => c.n);
  const frontText = onTimeEnergy
    ? `Filled and joined: the Pareto front (${results.paretoFront.length} of ${points.length}: ${results.paretoFront.join(', ')}).`
    : `Filled: the Pareto front on ${results.objectives.join(' and ')} (the campaign's objectives).`;
  return {
    id: 'pareto',
    title: 'Time against energy',
    svg: parts.join(''),
    caption:
      `Mean time against mean energy per run of each configuration (n = ${nRange(ns)} runs per configuration); ` +
      `error bars are the two-sided 95 % Student-t intervals of the means on both axes (an arrowhead: the interval goes on beyond the plot). ${frontText}` +
      (numbered(points.map(entryId)) ? ' Points are numbered as in the tables (#).' : ''),
    table: {
      headers: ['#', 'configuration', 'n', 'time', 'time 95 % low', 'time 95 % high', 'energy', 'energy 95 % low', 'energy 95 % high', 'front'],
      rows: points.map((c) => [
        text(label(entryId(c))), text(entryId(c)), num(c.n, String), num(c.timeS.mean, formatTime), ...ends(c.timeS, formatTime), num(c.energyJ.mean, formatEnergy), ...ends(c.energyJ, formatEnergy),
        text(front.has(entryId(c)) ? 'yes' : 'no'),
      ]),
    },
  };
}

/**
 * Mean self energy per phase, stacked per configuration (the self energies and the unmarked
 * energy add up to the run's energy), with the 95 % interval of the runs' energy as a whisker.
 */
export function phasesFigure(results: CampaignResults): Figure | null {
  const phases = results.phases;
  if (!phases || phases.configurations.length === 0) return null;
  const order = new Map(results.configurations.map((c, i) => [c.key, i]));
  const configs = [...phases.configurations].sort((a, b) => (order.get(a.key) ?? 1e9) - (order.get(b.key) ?? 1e9));
  const names = [...new Set(configs.flatMap((c) => c.phases.map((p) => p.name)))].sort((a, b) => (a === UNMARKED_PHASE ? 1 : b === UNMARKED_PHASE ? -1 : a.localeCompare(b)));
  const color = (name: string) => (name === UNMARKED_PHASE ? '#DDDDDD' : PALETTE[names.indexOf(name) % PALETTE.length]!);
  const label = configurationLabels(results);
  const labelW = Math.min(220, 20 + 6 * Math.max(...configs.map((c) => label(c.key).length)));
  const rowH = 22;
  const legendRows = Math.ceil(names.length / 4);
  const frame: Frame = { width: 640, height: 16 + configs.length * rowH + 44 + legendRows * 16, left: labelW, right: 620, top: 10, bottom: 10 + configs.length * rowH };
  const highs = configs.map((c) => interval(c.energyJ.ci95)?.[1] ?? c.energyJ.mean ?? 0);
  const x = linearScale([...highs, ...configs.map((c) => c.phases.reduce((a, p) => a + (p.selfEnergyJ.mean ?? 0), 0))], frame.left, frame.right, { zero: true });
  const parts = [svgOpen(frame, 'energy by phase per configuration', 'phases')];
  for (const t of x.ticks) parts.push(`<line x1="${px(x(t))}" x2="${px(x(t))}" y1="${frame.top}" y2="${frame.bottom}" stroke="#e4e4e4"/><text x="${px(x(t))}" y="${frame.bottom + 14}" text-anchor="middle">${esc(formatEnergy(t))}</text>`);
  parts.push(`<text x="${px((frame.left + frame.right) / 2)}" y="${frame.bottom + 30}" text-anchor="middle" font-weight="bold">mean self energy per run, by phase</text>`);
  configs.forEach((c, i) => {
    const top = frame.top + i * rowH + 3;
    parts.push(`<g data-key="${esc(c.key)}"><text x="${labelW - 6}" y="${top + 12}" text-anchor="end" font-size="10">${esc(label(c.key))}</text>`);
    let at = 0;
    for (const name of names) {
      const p = c.phases.find((q) => q.name === name);
      const v = p?.selfEnergyJ.mean ?? 0;
      if (v <= 0) continue;
      parts.push(`<rect x="${px(x(at))}" y="${top}" width="${px(x(at + v) - x(at))}" height="${rowH - 8}" fill="${color(name)}" stroke="white" stroke-width="0.5"><title>${esc(`${name}: ${formatEnergy(v)}`)}</title></rect>`);
      at += v;
    }
    const ci = interval(c.energyJ.ci95);
    if (ci) parts.push(whisker('h', top + (rowH - 8) / 2, x(ci[0]), x(ci[1]), '#000'));
    parts.push('</g>');
  });
  names.forEach((name, i) => {
    const lx = 10 + (i % 4) * 155, ly = frame.bottom + 42 + Math.floor(i / 4) * 16;
    parts.push(`<rect x="${lx}" y="${ly - 9}" width="10" height="10" fill="${color(name)}"/><text x="${lx + 14}" y="${ly}">${esc(name)}</text>`);
  });
  parts.push('</svg>');
  return {
    id: 'phases',
    title: 'Energy by phase',
    svg: parts.join(''),
    caption:
      `Mean self (exclusive) energy per run in each phase the runs marked, stacked per configuration (n = ${nRange(configs.map((c) => c.n))} runs with phases per configuration); ` +
      `the self energies and ${UNMARKED_PHASE} add up to the run's energy. Whiskers: the 95 % Student-t interval of the mean run energy. ` +
      'Phase energies are attributed from the sensors’ readings between marks (docs/design.md, “Energy definitions”).',
    table: {
      headers: ['#', 'configuration', 'n', 'phase', 'self energy', 'self 95 % low', 'self 95 % high', 'inclusive energy'],
      rows: configs.flatMap((c) => c.phases.map((p) => [text(label(c.key)), text(c.key), num(c.n, String), text(p.name), num(p.selfEnergyJ.mean, formatEnergy), ...ends(p.selfEnergyJ, formatEnergy), num(p.energyJ.mean, formatEnergy)])),
    },
  };
}

/**
 * Bytes moved per run against energy per run, one panel per kind of link measured: each
 * configuration's means with their 95 % intervals on both axes.
 */
export function movementFigure(results: CampaignResults): Figure | null {
  const movement = results.dataMovement;
  if (!movement || movement.configurations.length === 0) return null;
  const energy = new Map(results.configurations.map((c) => [c.key, c.energyJ]));
  const kinds = [...new Set(movement.configurations.flatMap((c) => c.kinds.map((k) => k.kind)))];
  const panelH = 300;
  const parts: string[] = [];
  const rows: Cell[][] = [];
  kinds.forEach((kind, i) => {
    const pts = movement.configurations
      .map((c) => ({ key: c.key, n: c.n, bytes: c.kinds.find((k) => k.kind === kind)?.bytes, energy: energy.get(c.key) }))
      .filter((p): p is { key: string; n: number; bytes: Summary; energy: Summary } => p.bytes?.mean != null && p.energy?.mean != null);
    const top = i * panelH;
    const frame: Frame = { width: 640, height: panelH, left: 70, right: 620, top: top + 22, bottom: top + panelH - 46 };
    const lo = (s: Summary) => interval(s.ci95)?.[0] ?? s.mean!;
    const hi = (s: Summary) => interval(s.ci95)?.[1] ?? s.mean!;
    const x = linearScale(plotRange(pts.map((p) => p.bytes.mean!), pts.flatMap((p) => [lo(p.bytes), hi(p.bytes)])), frame.left, frame.right, { floor: 0 });
    const y = linearScale(plotRange(pts.map((p) => p.energy.mean!), pts.flatMap((p) => [lo(p.energy), hi(p.energy)])), frame.bottom, frame.top, { floor: 0 });
    const label = configurationLabels(results);
    parts.push(`<g data-kind="${esc(kind)}"><text x="${frame.left}" y="${top + 14}" font-weight="bold">${esc(linkKindLabel(kind))}</text>`);
    parts.push(axes(frame, x, y, { x: `bytes per run over ${linkKindLabel(kind)}`, y: 'mean energy per run' }, { x: formatBytes, y: formatEnergy }));
    for (const [j, p] of [...pts].sort((a, b) => a.bytes.mean! - b.bytes.mean!).entries()) {
      const cx = x(p.bytes.mean!), cy = y(p.energy.mean!);
      parts.push(interval95('h', cy, x, p.bytes, '#009E73'), interval95('v', cx, y, p.energy, '#009E73'));
      parts.push(`<circle cx="${px(cx)}" cy="${px(cy)}" r="4" fill="#009E73"/>${pointLabel(label(p.key), cx, cy, frame, j % 2 === 1)}`);
    }
    for (const p of pts) {
      rows.push([text(linkKindLabel(kind)), text(label(p.key)), text(p.key), num(p.bytes.n, String), num(p.bytes.mean, formatBytes), ...ends(p.bytes, formatBytes), num(p.energy.mean, formatEnergy), ...ends(p.energy, formatEnergy)]);
    }
    parts.push('</g>');
  });
  const svg = svgOpen({ width: 640, height: kinds.length * panelH }, 'bytes moved against energy per configuration', 'movement') + parts.join('') + '</svg>';
  return {
    id: 'movement',
    title: 'Data movement against energy',
    svg,
    caption:
      `Mean bytes moved per run over each kind of link against the configuration's mean energy per run (n = ${nRange(movement.configurations.map((c) => c.n))} runs with data movement per configuration); ` +
      'error bars are the 95 % Student-t intervals of both means (an arrowhead: the interval goes on beyond the plot); points are labelled as in the table (# where they are many). The energy is the whole run’s: the kinds of link share it.',
    table: {
      headers: ['link', '#', 'configuration', 'n', 'bytes', 'bytes 95 % low', 'bytes 95 % high', 'energy', 'energy 95 % low', 'energy 95 % high'],
      rows,
    },
  };
}

export interface MarginalLevel {
  value: string;
  /** Configurations with this value and a mean. */
  configurations: number;
  /** Runs behind those configurations' means. */
  runs: number;
  meanTimeS: number | null;
  meanEnergyJ: number | null;
}

/**
 * Marginal means per parameter: for each value of each parameter with two or more values, the mean
 * of the configuration means that have it (equal weight per configuration, i.e. averaged over the
 * other parameters). Computed here from the configurations: the results API offers claims and node
 * effects, not marginal means.
 */
export function marginalMeans(configurations: readonly ConfigurationResult[]): { parameter: string; levels: MarginalLevel[] }[] {
  const measured = configurations.filter((c) => c.timeS.mean !== null || c.energyJ.mean !== null);
  const mean = (xs: number[]) => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);
  return parameterNames(measured).flatMap((name) => {
    const groups = new Map<string, { raw: unknown; members: ConfigurationResult[] }>();
    for (const c of measured) {
      if (!(name in c.parameters)) continue;
      const key = parameterText(c.parameters[name]);
      const g = groups.get(key) ?? { raw: c.parameters[name], members: [] };
      g.members.push(c);
      groups.set(key, g);
    }
    if (groups.size < 2) return [];
    let entries = [...groups.entries()];
    if (entries.every(([, g]) => typeof g.raw === 'number')) entries = entries.sort((a, b) => (a[1].raw as number) - (b[1].raw as number));
    const levels = entries.map(([value, g]) => ({
      value,
      configurations: g.members.length,
      runs: g.members.reduce((a, c) => a + c.n, 0),
      meanTimeS: mean(g.members.flatMap((c) => (c.timeS.mean === null ? [] : [c.timeS.mean]))),
      meanEnergyJ: mean(g.members.flatMap((c) => (c.energyJ.mean === null ? [] : [c.energyJ.mean]))),
    }));
    return [{ parameter: name, levels }];
  });
}

/** The marginal means as dot plots: one row per parameter value, time and energy side by side. */
export function effectsFigure(results: CampaignResults): Figure | null {
  const effects = marginalMeans(measuredConfigurations(results));
  if (effects.length === 0) return null;
  const rowH = 18;
  const labels = effects.flatMap((e) => e.levels.map((l) => `${e.parameter}=${l.value}`));
  const labelW = Math.min(200, 16 + 6 * Math.max(...labels.map((l) => l.length)));
  const rowsN = effects.reduce((a, e) => a + e.levels.length + 1, 0);
  const height = 30 + rowsN * rowH + 24;
  const panelW = (640 - labelW - 30) / 2;
  const all = effects.flatMap((e) => e.levels);
  const xt = linearScale(all.map((l) => l.meanTimeS ?? 0), labelW, labelW + panelW, { zero: true });
  const xe = linearScale(all.map((l) => l.meanEnergyJ ?? 0), labelW + panelW + 20, labelW + 2 * panelW + 20, { zero: true });
  const parts = [svgOpen({ width: 640, height }, 'marginal mean time and energy per parameter value', 'effects')];
  const bottom = 22 + rowsN * rowH;
  for (const [scale, format] of [[xt, formatTime], [xe, formatEnergy]] as const) {
    for (const t of scale.ticks) parts.push(`<line x1="${px(scale(t))}" x2="${px(scale(t))}" y1="20" y2="${bottom}" stroke="#e4e4e4"/><text x="${px(scale(t))}" y="${bottom + 14}" text-anchor="middle" font-size="9">${esc(format(t))}</text>`);
  }
  parts.push(`<text x="${labelW}" y="13" font-weight="bold">marginal mean time</text><text x="${px(labelW + panelW + 20)}" y="13" font-weight="bold">marginal mean energy</text>`);
  let row = 0;
  const rows: Cell[][] = [];
  for (const e of effects) {
    parts.push(`<text x="4" y="${22 + row * rowH + 12}" font-weight="bold">${esc(e.parameter)}</text>`);
    row++;
    for (const l of e.levels) {
      const cy = 22 + row * rowH + 8;
      parts.push(`<g data-parameter="${esc(e.parameter)}" data-value="${esc(l.value)}"><text x="${labelW - 6}" y="${cy + 4}" text-anchor="end" font-size="10">${esc(`${e.parameter}=${l.value}`)}</text>`);
      if (l.meanTimeS !== null) parts.push(`<line x1="${px(xt(0))}" x2="${px(xt(l.meanTimeS))}" y1="${cy}" y2="${cy}" stroke="#0072B2"/><circle cx="${px(xt(l.meanTimeS))}" cy="${cy}" r="3.5" fill="#0072B2"/>`);
      if (l.meanEnergyJ !== null) parts.push(`<line x1="${px(xe(0))}" x2="${px(xe(l.meanEnergyJ))}" y1="${cy}" y2="${cy}" stroke="#E69F00"/><circle cx="${px(xe(l.meanEnergyJ))}" cy="${cy}" r="3.5" fill="#E69F00"/>`);
      parts.push('</g>');
      rows.push([text(e.parameter), text(l.value), num(l.configurations, String), num(l.runs, String), num(l.meanTimeS, formatTime), num(l.meanEnergyJ, formatEnergy)]);
      row++;
    }
  }
  parts.push('</svg>');
  return {
    id: 'effects',
    title: 'Parameter effects (marginal means)',
    svg: parts.join(''),
    caption:
      'Marginal means: for each value of each parameter, the mean of the configuration means that have it (each configuration weighs the same, i.e. averaged over the other parameters); ' +
      'the table gives the configurations and runs (n) behind each. No interval: the results API offers none for marginal means, so erg report computes them from the configurations’ means; ' +
      'the claims above are the tested comparisons.',
    table: { headers: ['parameter', 'value', 'configurations', 'n (runs)', 'time', 'energy'], rows },
  };
}
