import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import type { NodeDoctorReport } from '@erg/spec';
import { DRIVER_FLOORS, judgeFloor } from '@erg/spec/driver-floors';
import { checkNode, MODULE_FIT_TOLERANCE } from '@erg/energy/node-check';
import { ConfigError, parseCommandLine, type AgentConfig } from './config';
import type { Logger } from './log';
import { detectSources } from './sources';
import { findExecutable } from './sources/executable';
import type { GpuStackIdentity } from './sources/types';
import { AGENT_VERSION } from './version';

// `erg-agent doctor`: first contact with a node. It runs the agent's own detection (the sources
// and scopes a run on this node would record), judges the driver and DCGM versions by the floors
// of @erg/spec/driver-floors, samples for --seconds, then compares each energy counter with the
// integral of the power reading of its scope and checks GPU + Grace ≤ Module (1 %), with the
// same functions a run's energy figures use (@erg/energy/node-check). It prints a short report and,
// with --json, writes the same as JSON. Exit 0: every check holds; 4: a check failed; 2: bad options.

/** A counter and its power reading may differ by this much before the doctor calls it a problem (sampling a 1 s meter every 100 ms is not exact). */
export const COUNTER_AGREEMENT_PERCENT = 5;

export interface DoctorOptions {
  /** How long to sample (s). */
  seconds: number;
  /** Where to write the JSON report; '-' for stdout instead of the text; absent: none. */
  json?: string;
}

/** The report, as @erg/spec's NodeDoctorReport schema defines it (the API validates uploads with it). */
export type DoctorReport = NodeDoctorReport;

/** Detects, samples for `seconds` every `config.intervalMs`, and judges what it saw. */
export async function runDoctor(config: AgentConfig, options: DoctorOptions, log: Logger): Promise<DoctorReport> {
  const detection = detectSources(config, log, () => {});
  const reads: { sensor: string; t: number[]; v: number[] }[] = [];
  let startMs = 0;
  let endMs = 0;
  try {
    startMs = Date.now();
    const cycles = Math.max(2, Math.round((options.seconds * 1000) / config.intervalMs) + 1);
    for (let k = 0; k < cycles; k += 1) {
      // Drift-free: cycle k at startMs + k × interval, as the agent's own schedule.
      const due = startMs + k * config.intervalMs;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const t = Date.now();
      for (const { source, sink } of detection.active) {
        try {
          source.read(t, sink);
        } catch (err) {
          log.warn('source read failed', { source: source.name, error: (err as Error).message });
        }
      }
      endMs = t;
    }
    const batch = detection.store.takeBatch(config.node, 0, false);
    if (batch) reads.push(...(JSON.parse(batch) as { samples: { sensor: string; t: number[]; v: number[] }[] }).samples);
  } finally {
    await Promise.all(detection.active.map(({ source }) => source.stop()));
  }
  const identity = detection.active.map(({ source }) => source.identity?.()).find((x): x is GpuStackIdentity => x !== undefined);
  const stack = {
    driverVersion: identity?.driverVersion ?? null,
    nvmlVersion: identity?.nvmlVersion ?? null,
    cudaVersion: identity?.cudaVersion ?? null,
    dcgmVersion: dcgmVersion(config),
  };
  const sensors = detection.store.sensors();
  const check = checkNode({ node: config.node, series: reads, sensors }, { startMs, endMs });
  const counters = check.comparisons.map((c) => ({ ...c, agrees: c.diffPercent === null ? null : Math.abs(c.diffPercent) <= COUNTER_AGREEMENT_PERCENT }));
  const moduleFit = check.moduleFit.map((f) => ({ ...f, maxRatio: Number.isFinite(f.maxRatio) ? f.maxRatio : null, holds: f.failed === 0 }));
  const floors = DRIVER_FLOORS.map((f) => ({ key: f.key, has: f.has, verdict: judgeFloor(f, stack), without: f.without }));
  const problems = [
    ...(sensors.length === 0 ? ['no sensor found: a run here would have no telemetry'] : []),
    ...counters.filter((c) => c.agrees === false).map((c) => `${c.counter} and the integral of ${c.power} differ by ${fmt(c.diffPercent as number)} % (more than ${COUNTER_AGREEMENT_PERCENT} %)`),
    ...moduleFit.filter((f) => !f.holds).map((f) => `gpu${f.index}.power + grace${f.index}.power > module${f.index}.power + ${MODULE_FIT_TOLERANCE * 100} % at ${f.failed} of ${f.checked} timestamps`),
    ...check.warnings.filter((w) => /unknown scope/.test(w)),
  ];
  return {
    kind: 'erg-node-doctor',
    version: 1,
    agentVersion: AGENT_VERSION,
    node: config.node,
    time: new Date(startMs).toISOString(),
    seconds: (endMs - startMs) / 1000,
    intervalMs: config.intervalMs,
    stack,
    floors,
    sources: detection.active.map(({ source }) => ({ name: source.name, sensors: source.sensors.map((s) => (s.scope ? { sensor: s.sensor, scope: s.scope } : { sensor: s.sensor })) })),
    notes: detection.notes,
    shadowed: detection.shadowed,
    counters,
    moduleFit,
    warnings: check.warnings,
    problems,
  };
}

/** DCGM's version from `dcgmi --version` ("dcgmi  version: 4.2.3"); null without dcgmi or an answer. */
function dcgmVersion(config: AgentConfig): string | null {
  if (!findExecutable(config.dcgmi, config.path)) return null;
  try {
    const out = execFileSync(config.dcgmi, ['--version'], { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'ignore'] });
    return /version\s*:?\s*(\d+(?:\.\d+)+)/i.exec(out)?.[1] ?? null;
  } catch {
    return null;
  }
}

const fmt = (x: number) => (Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2));

/** The report as a few lines for an admin's terminal. */
export function renderDoctorReport(r: DoctorReport): string {
  const lines: string[] = [];
  lines.push(`erg node doctor — ${r.node}, agent ${r.agentVersion}, ${fmt(r.seconds)} s sampled every ${r.intervalMs} ms`);
  const s = r.stack;
  lines.push('', `Stack: driver ${s.driverVersion ?? 'none'}, NVML ${s.nvmlVersion ?? 'none'}, CUDA ${s.cudaVersion ?? 'none'}, DCGM ${s.dcgmVersion ?? 'none'}`);
  lines.push('Floors (docs/energy.md):');
  for (const f of r.floors) lines.push(`  ${f.verdict === 'met' ? 'ok     ' : f.verdict === 'missing' ? 'MISSING' : 'unknown'}  ${f.key}: ${f.has}`);
  lines.push('', 'Sources the agent would use (sensor [scope]):');
  for (const src of r.sources) lines.push(`  ${src.name}: ${src.sensors.map((x) => `${x.sensor}${x.scope ? ` [${x.scope}]` : ''}`).join(', ')}`);
  for (const [name, notes] of Object.entries(r.notes)) for (const n of notes ?? []) lines.push(`  note ${name}: ${n}`);
  for (const x of r.shadowed) lines.push(`  ${x.sensor} from ${x.source} not used: ${x.keptFrom}'s is kept`);
  lines.push('', 'Energy counter vs integrated power, per scope:');
  if (r.counters.length === 0) lines.push('  no energy counter');
  for (const c of r.counters) {
    lines.push(
      c.power === null || c.integratedJ === null
        ? `  ${c.counter}: ${fmt(c.counterJ)} J; no power reading of that scope to compare`
        : `  ${c.counter} ${fmt(c.counterJ)} J vs ∫${c.power} ${fmt(c.integratedJ)} J: ${c.diffPercent === null ? 'n/a' : `${c.diffPercent >= 0 ? '+' : ''}${fmt(c.diffPercent)} %`} ${c.agrees === false ? 'DISAGREE' : 'ok'}`,
    );
  }
  lines.push('', `GPU + Grace ≤ Module (+${MODULE_FIT_TOLERANCE * 100} %):`);
  if (r.moduleFit.length === 0) lines.push('  not checked: no module with GPU, Grace and Module power readings');
  for (const f of r.moduleFit) {
    lines.push(`  module${f.index}: ${f.holds ? 'holds' : 'FAILS'} (${f.failed} of ${f.checked} timestamps over; max (gpu + grace) / module ${f.maxRatio === null ? 'n/a' : f.maxRatio.toFixed(3)})`);
  }
  for (const w of r.warnings) lines.push(`  warning: ${w}`);
  lines.push('', r.problems.length === 0 ? 'Verdict: every check holds' : `Verdict: ${r.problems.length} problem(s)`);
  for (const p of r.problems) lines.push(`  - ${p}`);
  return `${lines.join('\n')}\n`;
}

export const DOCTOR_USAGE = `erg-agent doctor — first contact with a node: the sources and scopes the agent would use, the
driver/NVML/DCGM versions against erg's floors, each energy counter against its scope's integrated
power, and GPU + Grace ≤ Module (1 %) on GH200.

Usage:
  node erg-agent.js doctor [--seconds 30] [--interval-ms 100] [--json <file>|-] [agent options]

  --seconds <s>      how long to sample (default 30; 0.5 … 3600)
  --json <file>|-    also write the report as JSON to <file>; '-' prints only the JSON
  agent options      --sysfs-root, --nvml-lib, --dcgmi, --sources, … as for the agent (--help there)

Exit status: 0 every check holds; 4 a check failed; 2 bad options; 1 anything else.
`;

/** The doctor's options and the agent configuration its detection runs with. */
export function parseDoctorCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): { help: true } | { help: false; config: AgentConfig; options: DoctorOptions } {
  const { values, tokens } = parseArgs({ args: [...argv], options: { seconds: { type: 'string' }, json: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: false, tokens: true });
  if (values.help === true) return { help: true };
  const own = new Set(['seconds', 'json', 'help']);
  // The rest are the agent's own options, parsed by its schema; the doctor belongs to no run and
  // spools nothing, so it fills those two required options itself.
  const rest: string[] = [];
  for (const t of tokens ?? []) {
    if (t.kind === 'option' && own.has(t.name)) continue;
    if (t.kind === 'option') rest.push(t.rawName, ...(t.value !== undefined ? [t.value] : []));
    else if (t.kind === 'positional') rest.push(t.value);
  }
  const hasInterval = rest.includes('--interval-ms') || env.ERG_AGENT_INTERVAL_MS !== undefined;
  const parsed = parseCommandLine(['--run-id', '00000000-0000-4000-8000-000000000000', '--spool-dir', '/nonexistent', ...(hasInterval ? [] : ['--interval-ms', '100']), ...rest], env);
  if (parsed.help) return { help: true };
  const seconds = values.seconds === undefined ? 30 : Number(values.seconds);
  if (!Number.isFinite(seconds) || seconds < 0.5 || seconds > 3600) throw new ConfigError(`invalid doctor options:\n  --seconds: must be a number of seconds from 0.5 to 3600; got ${JSON.stringify(values.seconds)}`);
  const json = typeof values.json === 'string' ? values.json : undefined;
  return { help: false, config: parsed.config, options: { seconds, ...(json !== undefined ? { json } : {}) } };
}
