// The study's answer, in a few lines under `erg results` and at the end of `erg submit --watch`:
// which configuration is fastest, which is most frugal, whether the results tell them apart (the
// claims of GET /v1/campaigns/:id/results, @erg/energy claims.ts), and what explains the
// difference between those two — the phase whose self energy differs most between them (the
// results' `phases`) and the kind of link whose bytes per run differ most (`dataMovement`).
import { claimsLevelText, formatBytes, formatEnergy, formatPercent, isNumber, linkKindLabel, rankLines } from '@erg/format';
import { UNMARKED_PHASE } from '@erg/spec';
import type { CampaignResults } from './model';

/** What differs most between the fastest and the most frugal configuration, in one kind of figure. */
export interface Difference {
  /** The phase's or link kind's name. */
  name: string;
  /** Mean per run in the fastest configuration's runs (J for a phase's self energy, bytes for a link kind). */
  fastest: number;
  /** The same in the most frugal configuration's runs. */
  mostFrugal: number;
}

export interface StudyAnswer {
  fastest: string;
  mostFrugal: string;
  /** The claims' level ("95 %, Holm over 28 comparisons"). */
  level: string;
  /** The fastest's rank line ("a, ahead of every other (closest …)"); the most frugal's. */
  fastestText: string;
  mostFrugalText: string;
  /** Whether choosing one over the other is a difference the results can tell (both time and energy distinguishable); null when they are one configuration. */
  distinguishable: boolean | null;
  /** The trade-off's sentence from the claims, or why there is none. */
  statement: string;
  /** Energy of the fastest's runs − the most frugal's (means, J), over the runs that marked phases; null without phases. */
  energyDifferenceJ: number | null;
  /** The marked phase with the largest self-energy difference; null without phases in both, or when they are one configuration. */
  phase: Difference | null;
  /** The link kind with the largest difference in bytes per run; null without data movement in both, or when they are one configuration. */
  movement: Difference | null;
}

/** The entry with the largest |fastest − mostFrugal| (ties: the first, in the order given); null when there is none. */
function largest(items: readonly Difference[]): Difference | null {
  return items.reduce<Difference | null>((best, d) => (best === null || Math.abs(d.fastest - d.mostFrugal) > Math.abs(best.fastest - best.mostFrugal) ? d : best), null);
}

/** Means per name of two entries, a name missing on one side counting 0 there (a run without the phase, a link that moved nothing). */
function differences(fastest: Map<string, number>, mostFrugal: Map<string, number>): Difference[] {
  const names = [...new Set([...fastest.keys(), ...mostFrugal.keys()])];
  return names.map((name) => ({ name, fastest: fastest.get(name) ?? 0, mostFrugal: mostFrugal.get(name) ?? 0 }));
}

function phaseDifference(results: CampaignResults, fastest: string, mostFrugal: string): { phase: Difference | null; energyDifferenceJ: number | null } {
  const byKey = new Map((results.phases?.configurations ?? []).map((c) => [c.key, c]));
  const f = byKey.get(fastest);
  const m = byKey.get(mostFrugal);
  if (!f || !m) return { phase: null, energyDifferenceJ: null };
  // Self energies: they partition a run's energy, so nested phases (all_to_all inside forward) and
  // enclosing ones are not counted twice. The time inside no phase explains nothing by name.
  const selfMeans = (c: typeof f) => new Map(c.phases.filter((p) => p.name !== UNMARKED_PHASE && isNumber(p.selfEnergyJ.mean)).map((p) => [p.name, p.selfEnergyJ.mean as number]));
  const energyDifferenceJ = isNumber(f.energyJ.mean) && isNumber(m.energyJ.mean) ? f.energyJ.mean - m.energyJ.mean : null;
  return { phase: largest(differences(selfMeans(f), selfMeans(m))), energyDifferenceJ };
}

function movementDifference(results: CampaignResults, fastest: string, mostFrugal: string): Difference | null {
  const byKey = new Map((results.dataMovement?.configurations ?? []).map((c) => [c.key, c]));
  const f = byKey.get(fastest);
  const m = byKey.get(mostFrugal);
  if (!f || !m) return null;
  const bytes = (c: typeof f) => new Map(c.kinds.filter((k) => isNumber(k.bytes.mean)).map((k) => [k.kind as string, k.bytes.mean as number]));
  return largest(differences(bytes(f), bytes(m)));
}

/**
 * The study's answer from a campaign's results; null where the results carry no claims (fewer
 * than two configurations with a time and an energy: nothing to compare).
 */
export function studyAnswer(results: CampaignResults): StudyAnswer | null {
  const claims = results.claims ?? null;
  if (!claims) return null;
  const ranks = rankLines(claims);
  const time = ranks.find((r) => r.objective === 'time');
  const energy = ranks.find((r) => r.objective === 'energy');
  if (!time || !energy) return null;
  const fastest = time.best;
  const mostFrugal = energy.best;
  const same = fastest === mostFrugal;
  const tradeoff = claims.tradeoff;
  const { phase, energyDifferenceJ } = same ? { phase: null, energyDifferenceJ: null } : phaseDifference(results, fastest, mostFrugal);
  return {
    fastest,
    mostFrugal,
    level: claimsLevelText(claims),
    fastestText: time.text,
    mostFrugalText: energy.text,
    distinguishable: same ? null : (tradeoff?.distinguishable ?? false),
    statement: same ? 'the fastest configuration is also the most frugal: there is no trade-off to make' : (tradeoff?.statement ?? claims.summary),
    energyDifferenceJ,
    phase,
    movement: same ? null : movementDifference(results, fastest, mostFrugal),
  };
}

function signed(x: number, format: (v: number) => string): string {
  return x > 0 ? `+${format(x)}` : x < 0 ? `−${format(-x)}` : format(0);
}

/** The answer as the lines `erg results` prints under its heading. */
export function studyAnswerLines(a: StudyAnswer): { heading: string; lines: string[] } {
  const lines = [`Fastest: ${a.fastestText}`, `Most frugal: ${a.mostFrugalText}`];
  if (a.distinguishable === null) {
    lines.push(`Distinguishable: — ${a.statement}.`);
    return { heading: `The study's answer (${a.level})`, lines };
  }
  lines.push(`Distinguishable: ${a.distinguishable ? 'yes' : 'no'} — ${a.statement}.`);
  if (a.phase) {
    const d = a.phase.fastest - a.phase.mostFrugal;
    const share = a.energyDifferenceJ !== null && a.energyDifferenceJ !== 0 ? ` (${formatPercent(d / a.energyDifferenceJ)} of the ${signed(a.energyDifferenceJ, formatEnergy)} between them)` : '';
    lines.push(
      `Phase: ${a.phase.name} differs most — ${signed(d, formatEnergy)} self energy per run in the fastest${share}: ` +
        `${formatEnergy(a.phase.fastest)} against ${formatEnergy(a.phase.mostFrugal)} (erg results --by-phase).`,
    );
  } else {
    lines.push('Phase: not known — the two configurations\' runs marked no phases (erg-mark or `import erg` marks them: erg phases --help).');
  }
  if (a.movement) {
    const d = a.movement.fastest - a.movement.mostFrugal;
    lines.push(
      `Data movement: ${linkKindLabel(a.movement.name)} differs most — ${signed(d, formatBytes)} per run in the fastest: ` +
        `${formatBytes(a.movement.fastest)} against ${formatBytes(a.movement.mostFrugal)} (erg results --data-movement).`,
    );
  } else {
    lines.push('Data movement: not known — no data-movement sensor measured both configurations\' runs.');
  }
  return { heading: `The study's answer (${a.level})`, lines };
}
