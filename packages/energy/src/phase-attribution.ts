/**
 * How one sensor's energy over the window divides among its node's leaf labels (phase-timeline.ts).
 *
 * Phases are often shorter than a reading: GH200 hwmon averages 50 ms, NVML readings 100 ms–1 s,
 * and a training step's optimizer phase lasts tens of milliseconds. Splitting each reading's
 * energy by the labels' share of its interval (proportional attribution) then smears a
 * high-power phase's energy into its neighbours. Instead, every reading is an observation of
 * Σ_L P_L · overlap_L (each label L drawing a constant mean power P_L), and the powers are
 * estimated by non-negative least squares over all readings: with enough readings whose interval
 * falls differently across the phase boundaries, a 20 ms phase's power is resolved from 100 ms
 * readings. Each label's energy is P_L × its time, rescaled so that the labels add up to what the
 * sensor measured.
 *
 * Where the readings cannot do that — a label in fewer than MIN_READINGS_PER_LABEL readings, too
 * few readings for the labels, or labels that always occur in the same proportions in every
 * reading (their columns collinear) — the attribution falls back to proportional, for the
 * labels concerned or the whole sensor, and says so. Internal to @erg/energy.
 */
import type { PhaseAttributionMethod } from '@erg/spec';
import { invert, nnls, symmetricEigen } from './least-squares';
import type { Label, Segment } from './phase-timeline';
import type { SensorReadings } from './sensor-readings';
import { studentTQuantile } from './student-t';

/** A label's power is estimated only from at least this many readings that overlap it. */
export const MIN_READINGS_PER_LABEL = 3;
/** At most this many labels are regressed on one sensor; beyond, attribution is proportional (the fit costs k³). */
export const MAX_REGRESSION_LABELS = 64;
/**
 * Smallest eigenvalue of the labels' scaled normal matrix (unit diagonal; eigenvalues sum to the
 * label count) below which they count as inseparable. Exactly collinear labels give ~1e-16; a
 * value of 1e-6 would already inflate a power's standard error a thousandfold.
 */
export const MIN_DESIGN_EIGENVALUE = 1e-6;
/** A rescale further than this from 1 gets a warning: the model (constant power per label) fits the readings poorly. */
const RESCALE_WARNING = 0.1;

/** The outcome for one sensor. */
export interface SensorAttribution {
  /** regression when any label's power was estimated; proportional otherwise. */
  method: PhaseAttributionMethod;
  observations: number;
  /** Labels in the sensor's span. */
  labels: number;
  /** The part of the window the sensor has samples for (empty: none). */
  span: { fromMs: number; toMs: number };
  /** What the estimates were multiplied by (the regressed labels', else all) to add up to the sensor's energy (1: they did already). */
  rescale: number;
  /** The sum of the estimates rescaled, before (J) and after the rescale. */
  estimatedJ: number;
  rescaledJ: number;
  /** Energy (J) of each of the node's segments, index-aligned with them. */
  segmentJ: Float64Array;
  /** Labels whose energy was attributed proportionally. */
  proportional: ReadonlySet<Label>;
  /**
   * The square of the 95 % half-width (J²) of the energy of a set of segments, given the time
   * (ms, within the sensor's span) each label spends in them; 0 when none of them was regressed.
   */
  halfWidthSq: (msByLabel: ReadonlyMap<Label, number>) => number;
  warnings: string[];
}

export interface AttributionInput {
  /** `<node> <sensor>`: how warnings name the sensor. */
  who: string;
  segments: readonly Segment[];
  readings: SensorReadings;
  /** The sensor's energy over the window (its computeRunEnergy term): what the labels add up to. */
  joules: number;
  /** The part of the window the sensor has samples for: no energy is attributed outside it. */
  span: { fromMs: number; toMs: number };
  /** proportional: skip the regression. */
  method: PhaseAttributionMethod;
}

/**
 * Divides one sensor's energy among the labels: by regression where the readings allow (each
 * regressed label's segments get its fitted power × their time), else — and for the labels the
 * regression leaves out — by the energy read from the sensor's curve over each segment.
 */
export function attributeSensor(input: AttributionInput): SensorAttribution {
  const { segments, readings, span } = input;
  const times = labelTimes(segments, span);
  const warnings: string[] = [];
  const curveJ = Float64Array.from(segments, (seg) => curveEnergy(seg, readings, span));
  const fit = input.method === 'regression' && times.size > 0 ? regressPowers(input, times, warnings) : null;
  const regressed = fit ? regressedSplit(input, fit, curveJ, warnings) : null;
  const split = regressed ?? proportionalSplit(curveJ, input.joules);
  return {
    method: regressed ? 'regression' : 'proportional',
    observations: readings.observations.length,
    labels: times.size,
    span,
    ...split,
    proportional: regressed ? fit!.thin : new Set(times.keys()),
    halfWidthSq: regressed ? rescaledHalfWidthSq(fit!, times, split.rescale) : () => 0,
    warnings,
  };
}

/** Energy per segment, and the rescale that made it add up. */
type Split = Pick<SensorAttribution, 'segmentJ' | 'rescale' | 'estimatedJ' | 'rescaledJ'>;

/** The curve's energy per segment, scaled to the sensor's energy (a power sensor's curve and its trapezoid total differ at the window's edges). */
function proportionalSplit(curveJ: Float64Array, joules: number): Split {
  const estimatedJ = curveJ.reduce((sum, x) => sum + x, 0);
  const rescale = estimatedJ > 0 ? joules / estimatedJ : 1;
  return { segmentJ: curveJ.map((x) => x * rescale), rescale, estimatedJ, rescaledJ: joules };
}

/**
 * Fitted power × time for the regressed labels' segments, scaled to share what the others (their
 * curve energy, a measurement) leave of the sensor's energy; null (with a warning) where the
 * others already hold more than all of it.
 */
function regressedSplit(input: AttributionInput, fit: PowerFit, curveJ: Float64Array, warnings: string[]): Split | null {
  const column = new Map(fit.fitted.map((l, j) => [l, j]));
  const segmentJ = Float64Array.from(curveJ);
  let fixedJ = 0;
  let estimatedJ = 0;
  input.segments.forEach((seg, s) => {
    const j = column.get(seg.leaf);
    if (j === undefined) fixedJ += curveJ[s]!;
    else estimatedJ += segmentJ[s] = (fit.powerW[j]! * overlapMs(seg, input.span)) / 1000;
  });
  const rescaledJ = input.joules - fixedJ;
  if (rescaledJ < 0) {
    warnings.push(`${input.who}: the labels it cannot regress already hold more than its energy; the energy is attributed proportionally`);
    return null;
  }
  const rescale = rescaledJ / estimatedJ;
  input.segments.forEach((seg, s) => {
    if (column.has(seg.leaf)) segmentJ[s]! *= rescale;
  });
  if (Math.abs(rescale - 1) > RESCALE_WARNING) {
    warnings.push(
      `${input.who}: the regression's estimates add up to ${(1 / rescale).toFixed(3)} × the energy they share and were rescaled by ${rescale.toFixed(3)}: ` +
        `the phases' power may not be constant, or its readings cover other intervals than assumed`,
    );
  }
  return { segmentJ, rescale, estimatedJ, rescaledJ };
}

/** The labels' fitted powers and what their uncertainty needs. */
interface PowerFit {
  /** The labels regressed, in the order of powerW and covariance. */
  fitted: Label[];
  /** The labels in too few readings to estimate: attributed proportionally. */
  thin: ReadonlySet<Label>;
  powerW: Float64Array;
  /** Covariance of powerW (W²), fitted.length². */
  covariance: Float64Array;
  /** Student's t 97.5 % quantile for the fit's residual degrees of freedom. */
  t975: number;
}

/** Fits the labels' powers; null (with a warning saying why) where the readings cannot separate them. */
function regressPowers(input: AttributionInput, times: ReadonlyMap<Label, number>, warnings: string[]): PowerFit | null {
  const all = [...times.keys()];
  if (all.length > MAX_REGRESSION_LABELS) {
    warnings.push(`${input.who}: ${all.length} phase labels are more than the ${MAX_REGRESSION_LABELS} a regression is fitted for; their energy is attributed proportionally`);
    return null;
  }
  const design = overlapDesign(input.segments, input.readings, all);
  const { thin, rows, used } = thinLabels(design, all);
  const fitted = all.filter((l) => !thin.has(l));
  if (thin.size > 0) {
    warnings.push(`${input.who}: ${names([...thin])} fall(s) in fewer than ${MIN_READINGS_PER_LABEL} of its readings; attributed proportionally`);
  }
  if (fitted.length === 0) return null;
  if (used < MIN_READINGS_PER_LABEL * fitted.length) {
    warnings.push(
      `${input.who}: ${used} readings are too few to separate ${fitted.length} phase labels (${MIN_READINGS_PER_LABEL} per label needed); their energy is attributed proportionally`,
    );
    return null;
  }
  const fit = fitPowers(design, all, fitted, rows);
  if ('inseparable' in fit) {
    warnings.push(
      `${input.who}: its readings (every ~${formatMs(input.readings.resolutionMs)}) cannot separate ${names(fit.inseparable)}: they occur in the same proportions in every reading; ` +
        `the energy is attributed proportionally`,
    );
    return null;
  }
  if (fit.powerW.every((p) => p === 0)) {
    warnings.push(`${input.who}: the regression explains none of its energy (every estimated power is 0); the energy is attributed proportionally`);
    return null;
  }
  return { fitted, thin, ...fit };
}

/** A segment's energy read from the sensor's curve over the part of it inside the span. */
function curveEnergy(seg: Segment, readings: SensorReadings, span: { fromMs: number; toMs: number }): number {
  const a = Math.max(seg.fromMs, span.fromMs);
  const b = Math.min(seg.toMs, span.toMs);
  return b > a ? readings.energyAt(b) - readings.energyAt(a) : 0;
}

/** Each label's time (ms) inside the span, in order of first appearance; labels with none are left out. */
function labelTimes(segments: readonly Segment[], span: { fromMs: number; toMs: number }): Map<Label, number> {
  const times = new Map<Label, number>();
  for (const seg of segments) {
    const d = overlapMs(seg, span);
    if (d > 0) times.set(seg.leaf, (times.get(seg.leaf) ?? 0) + d);
  }
  return times;
}

function overlapMs(seg: { fromMs: number; toMs: number }, span: { fromMs: number; toMs: number }): number {
  return Math.max(0, Math.min(seg.toMs, span.toMs) - Math.max(seg.fromMs, span.fromMs));
}

/** The readings as a sparse design: per reading, the seconds it overlaps each label (CSR), and its energy. */
interface Design {
  /** Reading r's entries are cols/secs[start[r] .. start[r+1]). */
  start: Int32Array;
  cols: Int32Array;
  secs: Float64Array;
  joules: Float64Array;
}

/** Builds the design by walking readings and segments together (both in time order). */
function overlapDesign(segments: readonly Segment[], readings: SensorReadings, labels: readonly Label[]): Design {
  const col = new Map(labels.map((l, j) => [l, j]));
  const obs = readings.observations;
  const start = new Int32Array(obs.length + 1);
  const cols: number[] = [];
  const secs: number[] = [];
  let first = 0; // the first segment that can still overlap a reading (readings' ends increase)
  for (let r = 0; r < obs.length; r++) {
    const { fromMs, toMs } = obs[r]!;
    while (first < segments.length && segments[first]!.toMs <= fromMs) first++;
    // A reading's start may precede the previous one's when it averages longer than the sampling interval.
    while (first > 0 && segments[first - 1]!.toMs > fromMs) first--;
    const row = new Map<number, number>();
    for (let s = first; s < segments.length && segments[s]!.fromMs < toMs; s++) {
      const d = overlapMs(segments[s]!, obs[r]!);
      const j = col.get(segments[s]!.leaf);
      if (d > 0 && j !== undefined) row.set(j, (row.get(j) ?? 0) + d / 1000);
    }
    for (const [j, x] of row) {
      cols.push(j);
      secs.push(x);
    }
    start[r + 1] = cols.length;
  }
  return {
    start,
    cols: Int32Array.from(cols),
    secs: Float64Array.from(secs),
    joules: Float64Array.from(obs, (o) => o.joules),
  };
}

/** The fitted powers and what their uncertainty needs; or the labels the readings cannot separate. */
type Fit = Pick<PowerFit, 'powerW' | 'covariance' | 't975'> | { inseparable: Label[] };

/**
 * The labels in too few readings to estimate their power, and the readings the others are fitted
 * on: those without any of them. A reading that holds a thin label cannot be explained without
 * its power, and guessing it (its share by time) would bias its neighbours — a 15 ms unmarked
 * sliver at 50 W inside a 300 W reading is not a third of that reading. Leaving such readings out
 * can leave another label with too few, so this repeats until none is left with too few.
 */
function thinLabels(d: Design, all: readonly Label[]): { thin: Set<Label>; rows: Uint8Array; used: number } {
  const m = d.joules.length;
  const rows = new Uint8Array(m).fill(1);
  const thinCol = new Uint8Array(all.length);
  for (;;) {
    const counts = new Int32Array(all.length);
    for (let r = 0; r < m; r++) if (rows[r]) for (let e = d.start[r]!; e < d.start[r + 1]!; e++) counts[d.cols[e]!]! += 1;
    let changed = false;
    for (let j = 0; j < all.length; j++) {
      if (!thinCol[j] && counts[j]! < MIN_READINGS_PER_LABEL) {
        thinCol[j] = 1;
        changed = true;
      }
    }
    if (!changed) break;
    for (let r = 0; r < m; r++) for (let e = d.start[r]!; e < d.start[r + 1]!; e++) if (thinCol[d.cols[e]!]) rows[r] = 0;
  }
  return { thin: new Set(all.filter((_, j) => thinCol[j])), rows, used: rows.reduce((s, x) => s + x, 0) };
}

/**
 * Fits the powers of `fitted` by NNLS on the readings `rows` marks. The covariance of the powers
 * is the unconstrained one, σ² (XᵀX)⁻¹ with σ² = RSS / (readings − labels).
 */
function fitPowers(d: Design, all: readonly Label[], fitted: readonly Label[], rows: Uint8Array): Fit {
  const k = fitted.length;
  const colOf = Int32Array.from(all, (l) => fitted.indexOf(l));
  const xtx = new Float64Array(k * k);
  const xty = new Float64Array(k);
  let m = 0;
  for (let r = 0; r < d.joules.length; r++) {
    if (!rows[r]) continue;
    m += 1;
    for (let e = d.start[r]!; e < d.start[r + 1]!; e++) {
      const a = colOf[d.cols[e]!]!;
      xty[a]! += d.secs[e]! * d.joules[r]!;
      for (let f = d.start[r]!; f < d.start[r + 1]!; f++) xtx[a * k + colOf[d.cols[f]!]!]! += d.secs[e]! * d.secs[f]!;
    }
  }
  const inseparable = inseparableLabels(xtx, k).map((j) => fitted[j]!);
  if (inseparable.length > 0) return { inseparable };
  const inverse = invert(xtx, k);
  if (!inverse) return { inseparable: [...fitted] };
  const powerW = nnls(xtx, xty, k);
  let rss = 0;
  for (let r = 0; r < d.joules.length; r++) {
    if (!rows[r]) continue;
    let fitJ = 0;
    for (let e = d.start[r]!; e < d.start[r + 1]!; e++) fitJ += d.secs[e]! * powerW[colOf[d.cols[e]!]!]!;
    rss += (d.joules[r]! - fitJ) ** 2;
  }
  const dof = m - k;
  const variance = dof > 0 ? rss / dof : 0;
  return { powerW, covariance: inverse.map((x) => x * variance), t975: dof > 0 ? studentTQuantile(0.975, dof) : 0 };
}

/**
 * The labels in a near-null direction of the design: eigenvectors of the scaled normal matrix
 * (XᵀX with unit diagonal, so that a label's share of time does not matter) whose eigenvalue is
 * below MIN_DESIGN_EIGENVALUE, and in each the labels that weigh in it. Empty: all separable.
 */
function inseparableLabels(xtx: Float64Array, k: number): number[] {
  const scale = Float64Array.from({ length: k }, (_, j) => 1 / Math.sqrt(xtx[j * k + j]!));
  const c = xtx.map((x, i) => x * scale[Math.floor(i / k)]! * scale[i % k]!);
  const { values, vectors } = symmetricEigen(c, k);
  const found = new Set<number>();
  values.forEach((value, i) => {
    if (value >= MIN_DESIGN_EIGENVALUE) return;
    vectors[i]!.forEach((x, j) => {
      if (Math.abs(x) >= 0.1) found.add(j);
    });
  });
  return [...found].sort((a, b) => a - b);
}

/**
 * The squared 95 % half-width of a set of segments' energy, by the delta method through the
 * rescale: with estimates r_L = P_L τ_L of the regressed labels, S = Σ r and their energies
 * E_L = T r_L / S (T the energy they share), the set's energy Σ g_L E_L (g_L its share of label
 * L's time) moves with P_M by (T/S)(g_M − Σ_L g_L r_L/S) τ_M. All regressed labels together
 * (every g = 1) have width 0: the rescale pins their total, only the split is uncertain.
 */
function rescaledHalfWidthSq(fit: PowerFit, times: ReadonlyMap<Label, number>, rescale: number): (msByLabel: ReadonlyMap<Label, number>) => number {
  const k = fit.fitted.length;
  const tauS = fit.fitted.map((l) => times.get(l)! / 1000);
  const estimates = fit.fitted.map((_, j) => fit.powerW[j]! * tauS[j]!);
  const total = estimates.reduce((s, x) => s + x, 0);
  return (msByLabel) => {
    const g = fit.fitted.map((l) => (msByLabel.get(l) ?? 0) / times.get(l)!);
    const mean = g.reduce((s, x, j) => s + (x * estimates[j]!) / total, 0);
    const h = g.map((x, j) => rescale * (x - mean) * tauS[j]!);
    let variance = 0;
    for (let a = 0; a < k; a++) for (let b = 0; b < k; b++) variance += h[a]! * fit.covariance[a * k + b]! * h[b]!;
    return fit.t975 ** 2 * Math.max(0, variance);
  };
}

function names(labels: readonly Label[]): string {
  return labels.map((l) => l ?? 'unmarked time').join(', ');
}

function formatMs(ms: number | null): string {
  return ms === null ? '?' : `${Number(ms.toPrecision(3))} ms`;
}
