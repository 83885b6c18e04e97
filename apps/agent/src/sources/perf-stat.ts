// How erg reads `perf stat -I <ms> -x , --log-fd 1 -a -e …`: perf's CSV interval output
// (tools/perf/Documentation/perf-stat.txt, "CSV FORMAT"; tools/perf/util/stat-display.c). Without
// --per-socket/--per-core and the like (erg asks for none) every line is one event's count over
// one interval:
//
//   <time>,<count>,<unit>,<event>,<run ns>,<running %>,<metric>,<metric unit>
//
// `time` is the interval's end in seconds since perf started counting (`%lu.%09lu`; perf 6.1 pads
// it on the left to 6 digits before the point); `count` the event's count over that interval, or
// `<not counted>` (enabled but never ran) or `<not supported>` (the kernel refused it); `unit` is
// empty unless the PMU's sysfs declares one (`events/<name>.unit`, with a `.scale` perf multiplies
// the count by); `event` is named as it was asked, plus the modifier perf added itself — `…/u`
// where perf_event_paranoid made it fall back to counting user space only. Run time and the
// running share say whether the counter was multiplexed (a count perf then scales up). The metric
// columns are empty for uncore events. perf writes these to stderr unless told otherwise
// (`--log-fd 1`: to stdout, where LineChild reads) and flushes after every interval.

/** `count` when perf has none: `<not counted>` or `<not supported>`. */
export type PerfMissingCount = 'not counted' | 'not supported';

/** One line of `perf stat -I … -x ,`. */
export interface PerfStatLine {
  /** The interval's end, seconds since perf started counting. */
  timeS: number;
  /** The count over the interval, as perf prints it (already multiplied by a sysfs `.scale`, where there is one). */
  count: number | PerfMissingCount;
  /** The count's unit from sysfs; '' where the PMU declares none (the SCF PMU declares none). */
  unit: string;
  /** The event as perf names it, modifiers included (`nvidia_scf_pmu_0/cmem_rd_data/u`). */
  event: string;
  /** How long (ns) the counter ran in the interval, and that as a share of the time it was enabled (%). */
  runNs: number;
  runningPct: number;
}

const MISSING: Readonly<Record<string, PerfMissingCount>> = { '<not counted>': 'not counted', '<not supported>': 'not supported' };

/** One data line of perf's CSV interval output; null for anything else (blank lines, `# started on …`, perf's warnings). */
export function parsePerfStatLine(line: string, sep = ','): PerfStatLine | null {
  const trimmed = line.trim();
  if (trimmed === '' || trimmed.startsWith('#')) return null;
  const f = trimmed.split(sep);
  if (f.length < 6) return null;
  const timeS = strictNumber(f[0] as string);
  const rawCount = (f[1] as string).trim();
  const count = MISSING[rawCount] ?? strictNumber(rawCount);
  const event = (f[3] as string).trim();
  const runNs = strictNumber(f[4] as string);
  const runningPct = strictNumber(f[5] as string);
  if (!Number.isFinite(timeS) || timeS < 0 || event === '' || (typeof count === 'number' && !(Number.isFinite(count) && count >= 0))) return null;
  return { timeS, count, unit: (f[2] as string).trim(), event, runNs, runningPct };
}

/** `perf stat` names an event `pmu/terms/` plus modifiers (`u`, `k`, …); the name without them. */
export function eventBase(event: string): string {
  const last = event.lastIndexOf('/');
  return last > 0 && event.indexOf('/') < last ? event.slice(0, last + 1) : event;
}

/** The modifiers perf appended after an event's closing slash (`u` in `…/cmem_rd_data/u`); '' for none. */
export function eventModifiers(event: string): string {
  return event.slice(eventBase(event).length);
}

/** A decimal number with nothing else around it (Number('') would be 0). */
function strictNumber(text: string): number {
  const t = text.trim();
  return /^\d+(\.\d+)?$/.test(t) ? Number(t) : Number.NaN;
}
