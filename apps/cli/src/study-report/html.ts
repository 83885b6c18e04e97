// `erg report CAMPAIGN --format html`: a campaign's study report as one self-contained HTML file —
// what a paper's figure section needs: the Pareto plot with intervals, energy by phase, data
// movement against energy, parameter effects, the validity summary, provenance and the spec.
// Styles are inline and fonts are the reader's own: the file makes no request of any kind, so it
// opens the same from a laptop, an archive or a PDF printer (study-report/pdf.ts).
import {
  claimsLevelText, claimsLines, confoundedLines, entryId, fingerprintPrefix, flaggedConfigurations, formatEdp, formatEnergy, formatPower, formatTime, halfWidth, leftOutText,
  measuredConfigurations, NODE_EFFECT_HEADERS, nodeEffectRows, plural, VALIDITY_CHECK_LABELS,
} from '@erg/format';
import type { CampaignResults, Summary } from '../api-types';
import { comparisonRows, comparisonSentence } from '../results/by-phase';
import { effectsFigure, movementFigure, paretoFigure, phasesFigure, type Cell, type Figure } from './figures';
import { esc } from './svg';

/** Everything the report is made of: the API's answers and who wrote it when. */
export interface ReportInput {
  campaign: {
    id: string;
    name: string;
    cluster: string | null;
    owner: string | null;
    state: string;
    totalRuns: number;
    runCounts: Record<string, number>;
    createdAt: string;
    spec: unknown;
  };
  results: CampaignResults;
  /** The same results grouped by fingerprint (?groupBy=fingerprint): the kinds of machine each configuration ran on. */
  byFingerprint: CampaignResults | null;
  ergVersion: string;
  /** ISO 8601. */
  generatedAt: string;
}

const STYLE = `
@page { size: A4; margin: 14mm 12mm; }
html { font-family: Helvetica, Arial, sans-serif; font-size: 10.5pt; color: #111; }
body { max-width: 180mm; margin: 0 auto; padding: 8px; }
h1 { font-size: 17pt; margin: 0 0 4px; }
h2 { font-size: 13pt; margin: 18px 0 6px; border-bottom: 1px solid #bbb; break-after: avoid; }
h3 { font-size: 11pt; margin: 12px 0 4px; break-after: avoid; }
p, li { line-height: 1.35; }
.meta { color: #444; font-size: 9.5pt; }
figure { margin: 10px 0 16px; break-inside: avoid; }
figure svg { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 9.5pt; margin-top: 4px; }
table { border-collapse: collapse; font-size: 8.5pt; margin: 6px 0 10px; break-inside: auto; }
tr { break-inside: avoid; }
th, td { border-bottom: 1px solid #ddd; padding: 2px 6px; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th { border-bottom: 1px solid #888; }
details.data summary { font-size: 9pt; color: #444; }
pre { font-size: 8pt; background: #f6f6f6; padding: 6px; white-space: pre-wrap; word-break: break-all; }
pre.short { break-inside: avoid; }
code { font-size: 9pt; }
.none { color: #555; font-style: italic; }
table.facts td.num { text-align: left; }
table[data-table="results"] td.num { white-space: normal; }
@media print { details.data > *:not(summary) { display: block; } details.data summary { display: none; } }
`;

function cellHtml(c: Cell): string {
  const numeric = c.value !== undefined;
  const value = numeric && c.value !== null ? ` data-value="${esc(String(c.value))}"` : '';
  // Keys (`a=1;b=x`) have no spaces: a break opportunity after each `;` lets a long one wrap instead of widening the table past the page.
  return `<td${numeric ? ' class="num"' : ''}${value}>${esc(c.text).replace(/;/g, ';<wbr>')}</td>`;
}

function tableHtml(headers: readonly string[], rows: readonly Cell[][], testid: string, className = ''): string {
  return (
    `<table data-table="${esc(testid)}"${className ? ` class="${className}"` : ''}><thead><tr>${headers.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>` +
    `<tbody>${rows.map((r) => `<tr>${r.map(cellHtml).join('')}</tr>`).join('')}</tbody></table>`
  );
}

/** A figure, numbered, with its caption and (open, so that it prints) its data table. */
function figureHtml(f: Figure, number: number): string {
  return (
    `<figure data-figure="${esc(f.id)}">${f.svg}<figcaption><b>Figure ${number}. ${esc(f.title)}.</b> <span data-caption>${esc(f.caption)}</span></figcaption>` +
    `<details class="data" open><summary>the numbers plotted</summary>${tableHtml(f.table.headers, f.table.rows, f.id)}</details></figure>`
  );
}

const none = (text: string, testid: string) => `<p class="none" data-none="${esc(testid)}">${esc(text)}</p>`;
const list = (items: readonly string[]) => (items.length === 0 ? '' : `<ul>${items.map((i) => `<li>${esc(i)}</li>`).join('')}</ul>`);
const pm = (s: Summary, f: (x: number) => string) => {
  const h = halfWidth(s);
  return h === null ? f(s.mean as number) : `${f(s.mean as number)} ± ${f(h)}`;
};

/** The results per configuration: n, the four figures with their 95 % half-widths, the front. */
function resultsTable(results: CampaignResults): string {
  const front = new Set(results.paretoFront);
  // The key names every parameter's value (`a=1;b=x`): no column per parameter, so that the table fits a page.
  const rows = measuredConfigurations(results).map((c, i): Cell[] => [
    { text: String(i + 1) },
    { text: entryId(c) },
    { text: String(c.n), value: c.n },
    { text: pm(c.timeS, formatTime), value: c.timeS.mean },
    { text: pm(c.energyJ, formatEnergy), value: c.energyJ.mean },
    { text: pm(c.avgPowerW, formatPower), value: c.avgPowerW.mean },
    { text: pm(c.edpJs, formatEdp), value: c.edpJs.mean },
    { text: front.has(entryId(c)) ? 'yes' : 'no' },
  ]);
  return tableHtml(['#', 'configuration', 'n', 'time', 'energy', 'avg power', 'EDP', 'front'], rows, 'results');
}

function phaseComparisonHtml(results: CampaignResults): string {
  const c = results.phases?.comparison;
  if (!c) return '';
  const { rows } = comparisonRows(c);
  return (
    `<h3>Where the energy went between the fastest and the most frugal configuration</h3><p data-phase-comparison>${esc(comparisonSentence(c))}</p>` +
    (c.runtimeOptimal === c.energyOptimal ? '' : tableHtml(['phase', 'runtime-optimal', 'energy-optimal', 'difference', 'share of it'], rows.map((r) => r.map((t) => ({ text: t }))), 'phase-comparison'))
  );
}

function effectsHtml(results: CampaignResults, next: () => number): string {
  const parts: string[] = ['<section data-section="effects"><h2>Parameter effects</h2>'];
  const claims = results.claims;
  if (claims) {
    parts.push(`<h3>Claims (${esc(claimsLevelText(claims))})</h3><p data-claims-summary>${esc(claims.summary)}</p>`, list(claimsLines(claims).filter((l) => !l.startsWith('Summary: '))));
    parts.push(`<p class="meta">${esc(claims.method)}</p>`);
  } else {
    parts.push(none('No claims: fewer than two configurations have a time and an energy.', 'claims'));
  }
  if (results.nodes) {
    parts.push(`<h3>Node effects (${results.nodes.nodes} nodes)</h3>`, tableHtml(NODE_EFFECT_HEADERS, nodeEffectRows(results.nodes).map((r) => r.map((t) => ({ text: t }))), 'nodes'));
    parts.push(list(confoundedLines(results.nodes)), `<p class="meta">${esc(results.nodes.note)}</p>`);
  }
  const effects = effectsFigure(results);
  parts.push(effects ? figureHtml(effects, next()) : none('No parameter takes two or more values among the measured configurations: no marginal means.', 'effects'));
  parts.push('</section>');
  return parts.join('');
}

function validityHtml(results: CampaignResults): string {
  const v = results.validity;
  const failures = Object.entries(v.failures).map(([gate, count]) => `${VALIDITY_CHECK_LABELS[gate] ?? gate}: ${plural(count ?? 0, 'run')} failed`);
  const leftOut = results.runsLeftOut.map((r) => `run ${r.repetition} of ${r.key}: ${leftOutText(r)}`);
  const flagged = flaggedConfigurations(results.configurations).map(({ configuration, text }) => `${entryId(configuration)}: ${text}`);
  const rows: Cell[][] = [
    [{ text: 'publishable' }, { text: v.publishable ? 'yes' : 'no' }],
    [{ text: 'completed runs checked' }, { text: String(v.runs), value: v.runs }],
    [{ text: 'valid' }, { text: String(v.valid), value: v.valid }],
    [{ text: 'invalid' }, { text: String(v.invalid), value: v.invalid }],
    [{ text: 'unchecked (no validity recorded)' }, { text: String(v.unchecked), value: v.unchecked }],
    [{ text: 'invalid and left out of the figures' }, { text: String(v.excluded), value: v.excluded }],
  ];
  return (
    `<section data-section="validity"><h2>Validity</h2><p data-publishable>${esc(`publishable: ${v.publishable ? 'yes' : 'no'} — ${v.note}`)}</p>` +
    tableHtml(['', 'runs'], rows, 'validity', 'facts') +
    (failures.length ? `<h3>Gates failed</h3>${list(failures)}` : '') +
    (leftOut.length ? `<h3>Runs left out of the figures</h3>${list(leftOut)}` : '') +
    (flagged.length ? `<h3>Runs to read with care</h3>${list(flagged)}` : '') +
    `<p class="meta">${esc(`The gates (${Object.values(VALIDITY_CHECK_LABELS).join(', ')}) and their limits are the spec's validity block; \`erg run RUN\` lists each run's worst values.`)}</p></section>`
  );
}

function provenanceHtml(input: ReportInput): string {
  const { results, byFingerprint, campaign } = input;
  const d = results.design;
  const rows: Cell[][] = [
    [{ text: 'campaign' }, { text: `${campaign.name} (${campaign.id})` }],
    [{ text: 'cluster' }, { text: campaign.cluster ?? 'none (imported runs)' }],
    [{ text: 'started by' }, { text: campaign.owner ?? '—' }],
    [{ text: 'created' }, { text: campaign.createdAt }],
    [{ text: 'state' }, { text: `${campaign.state}: ${Object.entries(campaign.runCounts).map(([s, n]) => `${n} ${s}`).join(', ')} of ${campaign.totalRuns} runs` }],
    [{ text: 'run order' }, { text: d.note }],
    [{ text: 'seed' }, d.seed === null ? { text: '— (the order has none)' } : { text: String(d.seed), value: d.seed }],
    [{ text: 'nodes balanced over' }, { text: d.nodes?.join(', ') ?? 'none named (Slurm chose)' }],
    [{ text: 'claims confidence' }, { text: `${Math.round(d.confidence * 1000) / 10} %`, value: d.confidence }],
    [{ text: 'power state' }, { text: results.power.note }],
    [{ text: 'written by' }, { text: `erg ${input.ergVersion} (erg report), ${input.generatedAt}` }],
  ];
  const machines: Cell[][] = (byFingerprint?.configurations ?? []).map((c) => [
    { text: c.key },
    { text: c.fingerprint ? fingerprintPrefix(c.fingerprint) : 'none (its agents sent none)' },
    { text: String(c.n), value: c.n },
  ]);
  const differing = results.configurations.filter((c) => c.fingerprintDifferences.length > 0).map((c) => `${entryId(c)}: ${c.fingerprintDifferences.join('; ')}`);
  return (
    `<section data-section="provenance"><h2>Provenance</h2>${tableHtml(['', ''], rows, 'provenance', 'facts')}` +
    `<h3>Kinds of machine (fingerprint classes)</h3>` +
    (machines.length ? tableHtml(['configuration', 'fingerprint class', 'n'], machines, 'fingerprints') : none('No fingerprints: no run has figures yet.', 'fingerprints')) +
    (differing.length ? `<p>Configurations whose runs ran on more than one kind of machine:</p>${list(differing)}` : `<p data-one-kind>Every configuration's runs ran on one kind of machine each.</p>`) +
    `<p class="meta">A fingerprint class is the hash of what each node's agent recorded at start (hardware, driver, kernel, modules, workload); <code>erg run RUN</code> and the evidence bundle (<code>erg export</code>) carry the full records.</p></section>`
  );
}

/** Lines of a spec that fit on one page: such a spec is not split, which would leave its last lines alone on a page. */
const SHORT_SPEC_LINES = 80;

function specHtml(spec: unknown): string {
  const text = JSON.stringify(spec, null, 2);
  return `<pre data-spec${text.split('\n').length <= SHORT_SPEC_LINES ? ' class="short"' : ''}>${esc(text)}</pre>`;
}

/** The whole report. */
export function reportHtml(input: ReportInput): string {
  const { results, campaign } = input;
  let figures = 0;
  const next = () => ++figures;
  const pareto = paretoFigure(results);
  const phases = phasesFigure(results);
  const movement = movementFigure(results);
  const tradeoff = results.claims?.tradeoff?.statement ?? null;
  const sections = [
    `<header><h1>Study report: ${esc(campaign.name)}</h1><p class="meta">campaign <code>${esc(campaign.id)}</code> · ${esc(campaign.cluster ?? 'imported runs')} · ${esc(campaign.state)} · ` +
      `written by erg ${esc(input.ergVersion)} on ${esc(input.generatedAt)}</p></header>`,
    `<section data-section="summary"><h2>Summary</h2>` +
      (results.best ? `<p>Fastest: <b>${esc(results.best.time)}</b>; least energy: <b>${esc(results.best.energy)}</b>; least EDP: <b>${esc(results.best.edp)}</b>.</p>` : none('No configuration has figures yet.', 'best')) +
      (tradeoff ? `<p data-tradeoff>Trade-off: ${esc(tradeoff)}.</p>` : '') +
      (results.claims ? `<p>${esc(results.claims.summary)}</p>` : '') +
      `<p>${esc(`publishable: ${results.validity.publishable ? 'yes' : 'no'} — ${results.validity.note}`)}</p>` +
      `<h3>Results per configuration</h3>${resultsTable(results)}<p class="meta">± is the half-width of the two-sided 95 % Student-t interval of the mean over the configuration's n runs.</p></section>`,
    `<section data-section="pareto"><h2>Time and energy</h2>${pareto ? figureHtml(pareto, next()) : none('No configuration has a mean time and energy yet.', 'pareto')}</section>`,
    `<section data-section="phases"><h2>Energy by phase</h2>${
      phases ? figureHtml(phases, next()) + phaseComparisonHtml(results) : none('No run of this campaign marked phases (erg-mark, `import erg` or the spec’s `phases` regexes mark them).', 'phases')
    }</section>`,
    `<section data-section="movement"><h2>Data movement</h2>${
      movement ? figureHtml(movement, next()) : none('No run of this campaign measured data movement (no PCIe, NVLink, NVLink-C2C, host-memory or network traffic sensor on its nodes).', 'movement')
    }</section>`,
    effectsHtml(results, next),
    validityHtml(results),
    provenanceHtml(input),
    `<section data-section="spec"><h2>The spec</h2><p class="meta">As the API stored it (JSON; <code>erg export</code> also keeps it as submitted).</p>${specHtml(campaign.spec)}</section>`,
  ];
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    // Nothing may load from anywhere: the policy makes a stray reference fail loudly in a browser's console.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">` +
    `<meta name="generator" content="erg ${esc(input.ergVersion)}"><title>${esc(`erg study report: ${campaign.name}`)}</title><style>${STYLE}</style></head>` +
    `<body>${sections.join('\n')}</body></html>\n`
  );
}
