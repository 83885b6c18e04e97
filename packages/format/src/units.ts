// Every number a person reads goes through these formatters, so that a figure looks the same in
// every CLI command and on every web page: three significant digits and an SI prefix for measured quantities, clock-like
// durations for elapsed times, `—` for "no value". Machine formats (CSV, JSON) never use them.

/** Shown where there is no value: null, undefined, NaN or ±Infinity. */
export const NO_VALUE = '—';

type Maybe = number | null | undefined;

export function isNumber(x: unknown): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}

/** A prefix ladder, smallest first; each step is 1000× the previous one. */
type Ladder = readonly { prefix: string; factor: number }[];

const SI_PREFIXES = [
  { prefix: 'µ', factor: 1e-6 },
  { prefix: 'm', factor: 1e-3 },
  { prefix: '', factor: 1 },
  { prefix: 'k', factor: 1e3 },
  { prefix: 'M', factor: 1e6 },
  { prefix: 'G', factor: 1e9 },
  { prefix: 'T', factor: 1e12 },
] as const;

/**
 * `x` with three significant digits, keeping trailing zeros ("1.00", "46.0", "206"); numbers of
 * 1000 and more (only reached beyond the largest prefix) are written as whole numbers.
 */
function threeDigits(x: number): string {
  if (x === 0) return '0';
  if (Math.abs(x) >= 1000) return String(Math.round(x));
  return x.toPrecision(3);
}

/**
 * `value` in `unit` with the SI prefix that puts the mantissa in [1, 1000), three significant
 * digits. Rounding comes first, so 999.5 J reads "1.00 kJ", not "1000 J".
 */
export function withPrefix(value: Maybe, unit: string): string {
  return onLadder(value, unit, SI_PREFIXES);
}

/** withPrefix on another ladder of prefixes (carbon's g, kg, t); below its first step the mantissa is under 1 ("0.512 g"). */
function onLadder(value: Maybe, unit: string, ladder: Ladder): string {
  if (!isNumber(value)) return NO_VALUE;
  if (value === 0) return `0 ${ladder.find((p) => p.factor === 1)?.prefix ?? ''}${unit}`;
  const magnitude = Math.abs(value);
  let index = ladder.findIndex((p) => magnitude < p.factor * 1000);
  if (index < 0) index = ladder.length - 1;
  let step = ladder[index]!;
  let mantissa = Number((value / step.factor).toPrecision(3));
  if (Math.abs(mantissa) >= 1000 && index < ladder.length - 1) {
    // The rounding carried into the next prefix: 999.5 → 1000 → 1.00 k (exactly, no new rounding).
    step = ladder[index + 1]!;
    mantissa /= 1000;
  }
  return `${threeDigits(mantissa)} ${step.prefix}${unit}`;
}

/** A plain number with three significant digits, for the factors of a product ("0.0342", "1.20", "360"). */
export function formatNumber(x: Maybe): string {
  return isNumber(x) ? threeDigits(Number(x.toPrecision(3))) : NO_VALUE;
}

/** Masses of CO₂-equivalent: grams, kilograms, tonnes. */
const CARBON_STEPS: Ladder = [
  { prefix: 'g', factor: 1 },
  { prefix: 'kg', factor: 1e3 },
  { prefix: 't', factor: 1e6 },
];

/** Carbon from grams of CO₂-equivalent: "0.512 gCO₂e", "12.3 kgCO₂e", "4.56 tCO₂e". */
export function formatCarbon(grams: Maybe): string {
  return onLadder(grams, 'CO₂e', CARBON_STEPS);
}

/** A grid's carbon intensity: "360 gCO₂e/kWh". */
export function formatIntensity(gramsPerKWh: Maybe): string {
  return isNumber(gramsPerKWh) ? `${formatNumber(gramsPerKWh)} gCO₂e/kWh` : NO_VALUE;
}

/**
 * An amount of money with its ISO 4217 code: cents from 1 up ("12.30 EUR", "1,234.50 EUR"),
 * three significant digits below, where cents would hide the differences ("0.00615 EUR").
 */
export function formatCost(amount: Maybe, currency: string | null | undefined): string {
  if (!isNumber(amount)) return NO_VALUE;
  const text =
    amount === 0 || Math.abs(Number(amount.toPrecision(3))) >= 1
      ? amount.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })
      : amount.toPrecision(3);
  return currency ? `${text} ${currency}` : text;
}

/** How each kind of link reads (@erg/spec's LINK_KINDS: pcie, nvlink, c2c, memory, infiniband, network). */
const LINK_KIND_LABELS: Readonly<Record<string, string>> = { pcie: 'PCIe', nvlink: 'NVLink', c2c: 'NVLink-C2C', memory: 'host memory', infiniband: 'InfiniBand', network: 'network' };

/** A kind of link as people read it: "PCIe", "NVLink-C2C", "host memory"; an unknown one as it is. */
export function linkKindLabel(kind: string): string {
  return LINK_KIND_LABELS[kind] ?? kind;
}

/** Bytes, decimal as link bandwidths are quoted: "512 B", "12.3 GB", "1.00 TB". */
export function formatBytes(bytes: Maybe): string {
  return withPrefix(bytes, 'B');
}

/** A transfer rate: "2.00 GB/s". */
export function formatByteRate(bytesPerS: Maybe): string {
  return withPrefix(bytesPerS, 'B/s');
}

/** What a gigabyte moved cost in energy: "45.0 J/GB", "1.20 kJ/GB". */
export function formatJoulesPerGB(joulesPerGB: Maybe): string {
  return withPrefix(joulesPerGB, 'J/GB');
}

/** Energy: "46.0 J", "12.3 kJ", "1.00 MJ". */
export function formatEnergy(joules: Maybe): string {
  return withPrefix(joules, 'J');
}

/** Power: "206 W", "1.20 kW". */
export function formatPower(watts: Maybe): string {
  return withPrefix(watts, 'W');
}

/** Energy-delay product: "10.3 J·s", "4.56 kJ·s". */
export function formatEdp(jouleSeconds: Maybe): string {
  return withPrefix(jouleSeconds, 'J·s');
}

const JOULES_PER_WH = 3600;

/** Energy in watt-hours ("3.42 Wh", "1.20 kWh"): what an electricity bill speaks. */
export function formatWh(joules: Maybe): string {
  return withPrefix(isNumber(joules) ? joules / JOULES_PER_WH : joules, 'Wh');
}

/** Whether a watt-hour figure helps next to the joules: from 1 Wh up (below, it reads "0.0123 Wh"). */
export function whIsHelpful(joules: Maybe): boolean {
  return isNumber(joules) && Math.abs(joules) >= JOULES_PER_WH;
}

/** "1 min 05 s", "1 h 02 min", "2 d 03 h" from a whole number of seconds (≥ 60). */
function clock(totalSeconds: number): string {
  if (totalSeconds < 3600) {
    return `${Math.floor(totalSeconds / 60)} min ${pad2(totalSeconds % 60)} s`;
  }
  const minutes = Math.round(totalSeconds / 60);
  if (minutes < 24 * 60) return `${Math.floor(minutes / 60)} h ${pad2(minutes % 60)} min`;
  const hours = Math.round(totalSeconds / 3600);
  return `${Math.floor(hours / 24)} d ${pad2(hours % 24)} h`;
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

function signed(seconds: number, format: (s: number) => string): string {
  return seconds < 0 ? `-${format(-seconds)}` : format(seconds);
}

/**
 * A measured duration: "850 µs", "223 ms", "3.21 s" under a minute (three significant digits),
 * then "1 min 05 s", "1 h 02 min", "2 d 03 h". 59.96 s rounds to "1 min 00 s", not "60.0 s".
 */
export function formatTime(seconds: Maybe): string {
  if (!isNumber(seconds)) return NO_VALUE;
  return signed(seconds, (s) => {
    if (s === 0) return '0 s';
    if (Number(s.toPrecision(3)) < 60) return withPrefix(s, 's');
    return clock(Math.round(s));
  });
}

/** A wall-clock span to the second, for elapsed times and ETAs: "0 s", "42 s", "1 min 05 s", "1 h 02 min". */
export function formatElapsed(seconds: Maybe): string {
  if (!isNumber(seconds)) return NO_VALUE;
  return signed(seconds, (s) => {
    const whole = Math.round(s);
    return whole < 60 ? `${whole} s` : clock(whole);
  });
}

/** A fraction as a percentage with one decimal: 0.1234 → "12.3 %"; `signed` adds "+" to positive values. */
export function formatPercent(fraction: Maybe, options: { signed?: boolean } = {}): string {
  if (!isNumber(fraction)) return NO_VALUE;
  const pct = fraction * 100;
  const text = `${pct.toFixed(1)} %`;
  // -0.04 % rounds to "-0.0 %": say 0.0 instead of a sign that means nothing.
  if (text === '-0.0 %') return options.signed ? '±0.0 %' : '0.0 %';
  if (text === '0.0 %' && options.signed) return '±0.0 %';
  return options.signed && pct > 0 ? `+${text}` : text;
}

/** A p-value: four decimals, "< 0.0001" below that. */
export function formatP(p: Maybe): string {
  if (!isNumber(p)) return NO_VALUE;
  if (p < 0.0001) return '< 0.0001';
  return p.toFixed(4);
}

/** A count with thousands separators: 12345 → "12,345". */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** "1 run", "3 runs". */
export function plural(n: number, word: string, pluralWord = `${word}s`): string {
  return `${formatCount(n)} ${n === 1 ? word : pluralWord}`;
}
