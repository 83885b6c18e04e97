// Data movement as the pages show it (issue 15 §3): a campaign's bytes against energy per
// configuration over one kind of link (a scatter with 95 % whiskers, GB against kJ, the runtime-
// and energy-optimal configurations labelled) with a table of bytes and J per GB per kind and the
// transfer overlap; a run's bytes, rate and J per GB per kind, its overlap, and its bytes per
// phase beside the phase's energy. Pure, for the React layer and the tests.
//
// Words (packages/spec/src/data-movement.ts): GB is 10⁹ bytes, as link bandwidths are quoted;
// J per GB is the run's whole energy over the bytes of one kind (the kinds share that energy: they
// do not add up); overlap is the share of GPU busy time during which the GPU's links moved data.
import { LINK_KINDS } from '@erg/spec/sensors';
import { formatByteRate, formatBytes, formatEnergy, formatJoulesPerGB, formatPercent, formatTime, linkKindLabel, NO_VALUE } from './format';
import { OPTIMAL_LABELS } from './pareto';
import { halfWidth, inConfigurationOrder } from './results';
import { scaledInterval, scatterLayout, type ScatterLayout, type ScatterPoint } from './scatter';
import type { CampaignDataMovement, CampaignResults, ConfigurationDataMovement, LinkKind, RunDataMovement, Summary, TransferOverlap } from './types';

/** How a kind of link reads (@erg/format's, as in `erg results --data-movement`). */
export const kindLabel = linkKindLabel;

/** Bytes in a GB (decimal), and J in a kJ: the scatter's axes. */
export const BYTES_PER_GB = 1e9;
export const J_PER_KJ = 1e3;

/** `kinds` in the API's order (LINK_KINDS: pcie, nvlink, c2c, memory, infiniband, network), once each. */
function inKindOrder(kinds: Iterable<string>): LinkKind[] {
  const present = new Set(kinds);
  return LINK_KINDS.filter((k) => present.has(k));
}

/** The kinds of link some configuration measured: exactly what the scatter's selector offers. */
export function movementKinds(movement: Pick<CampaignDataMovement, 'configurations'> | null | undefined): LinkKind[] {
  return inKindOrder((movement?.configurations ?? []).flatMap((c) => c.kinds.map((k) => k.kind)));
}

/** The kind the scatter shows: `chosen` while it is among `kinds`, else the first of them; null when there is none. */
export function shownKind(kinds: readonly LinkKind[], chosen: string | null | undefined): LinkKind | null {
  return kinds.find((k) => k === chosen) ?? kinds[0] ?? null;
}

/** The configurations' data movement in the order of the results table, those it does not list last. */
export function orderedMovement(results: Pick<CampaignResults, 'configurations' | 'dataMovement'>): ConfigurationDataMovement[] {
  return inConfigurationOrder(results.configurations, results.dataMovement?.configurations ?? []);
}

export interface MovementPoint extends ScatterPoint {
  /** The means: bytes per run over the kind, and the energy of the runs they were moved in (J). */
  bytes: number;
  energyJ: number;
  /** Runtime- and energy-optimal (results.best.time, best.energy). */
  fastest: boolean;
  leastEnergy: boolean;
}

export interface MovementScatter extends ScatterLayout<MovementPoint> {
  kind: LinkKind;
  xLabel: string;
  yLabel: string;
}

/**
 * Per configuration that measured `kind`: x its mean bytes per run over it (GB), y the mean energy
 * of those runs (kJ), both with their 95 % intervals cut at 0; the runtime- and energy-optimal
 * configurations labelled.
 */
export function movementScatter(results: Pick<CampaignResults, 'configurations' | 'dataMovement' | 'best'>, kind: LinkKind, width = 640, height = 380): MovementScatter {
  const rows = orderedMovement(results)
    .map((c) => ({ c, k: c.kinds.find((k) => k.kind === kind) }))
    .filter((r): r is { c: ConfigurationDataMovement; k: NonNullable<typeof r.k> } => r.k !== undefined && r.k.bytes.mean !== null && r.c.energyJ.mean !== null);
  const flags = rows.map(({ c }) => ({ fastest: results.best?.time === c.key, leastEnergy: results.best?.energy === c.key }));
  const L = scatterLayout(
    rows.map(({ c, k }, i) => ({
      key: c.key,
      x: k.bytes.mean! / BYTES_PER_GB,
      y: c.energyJ.mean! / J_PER_KJ,
      xInterval: scaledInterval(k.bytes.ci95, 1 / BYTES_PER_GB),
      yInterval: scaledInterval(c.energyJ.ci95, 1 / J_PER_KJ),
      label: [flags[i]!.fastest && OPTIMAL_LABELS.time, flags[i]!.leastEnergy && OPTIMAL_LABELS.energy].filter(Boolean).join(' · ') || null,
    })),
    width, height, axisNumber,
  );
  return {
    ...L,
    kind,
    xLabel: `mean bytes per run over ${kindLabel(kind)} (GB)`,
    yLabel: 'mean energy per run (kJ)',
    points: L.points.map((p, i) => ({ ...p, bytes: rows[i]!.k.bytes.mean!, energyJ: rows[i]!.c.energyJ.mean!, ...flags[i]! })),
  };
}

/** A tick on an axis whose unit its title gives (GB, kJ): the number alone, "0", "0.5", "12", "1,500". */
export function axisNumber(value: number): string {
  return Number(value.toPrecision(6)).toLocaleString('en-US', { maximumFractionDigits: 6 });
}

const pm = (s: Summary, f: (x: number) => string) => {
  const h = halfWidth(s);
  return h === null ? '' : ` ± ${f(h)}`;
};

/** One cell pair of the campaign's data-movement table: bytes per run (± 95 %) and J per GB over one kind. */
export interface MovementCell {
  bytes: string;
  joulesPerGB: string;
}

export interface MovementRow {
  key: string;
  n: number;
  /** Per kind in the table's columns; NO_VALUE where the configuration did not measure it. */
  kinds: Record<string, MovementCell>;
  /** The mean share of GPU busy time overlapped with transfers. */
  overlap: string;
}

/** The rows of the campaign's data-movement table, in the order of the results table, one cell pair per kind of `kinds`. */
export function movementRows(results: Pick<CampaignResults, 'configurations' | 'dataMovement'>, kinds: readonly LinkKind[]): MovementRow[] {
  return orderedMovement(results).map((c) => ({
    key: c.key,
    n: c.n,
    kinds: Object.fromEntries(kinds.map((kind) => {
      const k = c.kinds.find((x) => x.kind === kind);
      return [kind, k ? { bytes: formatBytes(k.bytes.mean) + pm(k.bytes, formatBytes), joulesPerGB: formatJoulesPerGB(k.joulesPerGB.mean) } : { bytes: NO_VALUE, joulesPerGB: NO_VALUE }];
    })),
    overlap: formatPercent(c.overlapFraction.mean),
  }));
}

/** One kind of link in a run's data-movement table. */
export interface RunKindRow {
  kind: LinkKind;
  label: string;
  bytes: string;
  rate: string;
  joulesPerGB: string;
  links: number;
  coverage: string;
}

export function runKindRows(movement: Pick<RunDataMovement, 'kinds'>): RunKindRow[] {
  return movement.kinds.map((k) => ({
    kind: k.kind, label: kindLabel(k.kind), bytes: formatBytes(k.bytes), rate: formatByteRate(k.meanRateBps), joulesPerGB: formatJoulesPerGB(k.joulesPerGB),
    links: k.links, coverage: formatPercent(k.coverage),
  }));
}

/** How much of the GPUs' busy time overlapped with transfers, in words. */
export function overlapText(overlap: TransferOverlap | null): string {
  if (!overlap) return 'Transfer overlap: not known (no GPU had both a utilisation sensor and a link sensor).';
  const how = `busy: utilisation above ${formatPercent(overlap.utilThresholdPct / 100)}; transferring: its links together above ${formatByteRate(overlap.rateThresholdBps)}`;
  if (overlap.fraction === null) return `Transfer overlap: no GPU was busy (${how}).`;
  return `Transfer overlap: ${formatPercent(overlap.fraction)} of ${formatTime(overlap.busyS)} GPU-busy time moved data over the GPUs' links (${formatTime(overlap.overlappedS)}; ${how}).`;
}

/** One phase of a run's bytes-per-phase table. */
export interface RunPhaseMovementRow {
  name: string;
  time: string;
  energy: string;
  /** Inclusive bytes and J per GB per kind of the table's columns. */
  kinds: Record<string, MovementCell>;
}

/** Bytes per phase beside the phase's energy, one column pair per kind some phase moved data over; null: no phases. */
export function runPhaseMovement(movement: Pick<RunDataMovement, 'phases'>): { kinds: LinkKind[]; rows: RunPhaseMovementRow[] } | null {
  const phases = movement.phases;
  if (!phases || phases.length === 0) return null;
  const kinds = inKindOrder(phases.flatMap((p) => Object.keys(p.kinds)));
  return {
    kinds,
    rows: phases.map((p) => ({
      name: p.name, time: formatTime(p.timeS), energy: formatEnergy(p.energyJ),
      kinds: Object.fromEntries(kinds.map((k) => {
        const b = p.kinds[k];
        return [k, { bytes: b ? formatBytes(b.bytes) : NO_VALUE, joulesPerGB: formatJoulesPerGB(p.joulesPerGB[k]) }];
      })),
    })),
  };
}
