import type { CooldownThresholds, IdleReference } from '@erg/spec/cooldown-plan';
import type { NodeCooldown } from '@erg/spec';

// Whether a node has cooled down before a run (the spec's cooldown block), from what its agent
// read over the last settleS seconds. Pure: cooldown-watch.ts feeds it readings and writes the
// record. The rules (docs/experiments.md, "Cooldown"):
//   - with an idle reference for the node (criterion idle_baseline): its mean power over the last
//     settleS is at most (1 + powerMargin) × its idle power, and every GPU whose temperature is
//     known both now and at idle is at most tempMarginC above its idle temperature;
//   - without one (criterion settled): the last two consecutive settleS means of its power agree
//     within powerMargin of the earlier one — the node is no longer cooling (or warming).
// A quantity the node has no sensor for (no power or energy sensor; no GPU temperature) does not
// hold it back; one it has a sensor for but no reading of over the window does (it is unknown).

/** What the agent read over the last settleS seconds (and the settleS before them). */
export interface CooldownReading {
  /** Whether the node has any power or energy sensor at all. */
  powerSensors: boolean;
  /** Mean power over the last settleS, by the energy selection rules; null: no power reading over it. */
  powerW: number | null;
  /** The same over the settleS before; null: not sampled that long, or no power reading then. */
  previousPowerW: number | null;
  /** Each GPU's mean temperature over the last settleS. */
  gpus: { gpu: number; tempC: number }[];
}

/** A verdict, with the figures the node's record carries. */
export type CooldownVerdict = { cool: boolean } & Pick<NodeCooldown, 'criterion' | 'powerW' | 'referenceW' | 'maxGpuTempC' | 'referenceTempC' | 'gpus'>;

/** Whether the node counts as cool now; `reference` is its idle reference, null when erg knows none. */
export function cooldownVerdict(thresholds: Pick<CooldownThresholds, 'powerMargin' | 'tempMarginC'>, reference: IdleReference | null, reading: CooldownReading): CooldownVerdict {
  const referenceTemp = new Map((reference?.gpus ?? []).map((g) => [g.gpu, g.tempC]));
  const gpus = reading.gpus.map((g) => ({ gpu: g.gpu, tempC: g.tempC, referenceTempC: referenceTemp.get(g.gpu) ?? null }));
  const figures = {
    powerW: reading.powerW,
    maxGpuTempC: gpus.length === 0 ? null : Math.max(...gpus.map((g) => g.tempC)),
    referenceTempC: referenceTemp.size === 0 ? null : Math.max(...referenceTemp.values()),
    gpus,
  };
  if (reference === null) {
    return { cool: settled(thresholds.powerMargin, reading), criterion: 'settled', referenceW: null, ...figures };
  }
  const powerOk = !reading.powerSensors || reference.powerW === null || (reading.powerW !== null && reading.powerW <= (1 + thresholds.powerMargin) * reference.powerW);
  const tempsOk = gpus.every((g) => g.referenceTempC === null || g.tempC <= g.referenceTempC + thresholds.tempMarginC);
  return { cool: powerOk && tempsOk, criterion: 'idle_baseline', referenceW: reference.powerW, ...figures };
}

/** Two consecutive means within powerMargin of the earlier one; with no power sensor at all, nothing to wait for. */
function settled(powerMargin: number, { powerSensors, powerW, previousPowerW }: CooldownReading): boolean {
  if (!powerSensors) return true;
  if (powerW === null || previousPowerW === null) return false;
  return Math.abs(powerW - previousPowerW) <= powerMargin * previousPowerW;
}
