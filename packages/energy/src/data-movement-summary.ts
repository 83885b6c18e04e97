import { UNMARKED_PHASE, type CampaignDataMovement, type ConfigurationDataMovement, type KindMovementSummary, type PhaseDataMovement, type PhaseMovementSummary, type RunDataMovement } from '@erg/spec';
import { LINK_KINDS, type LinkKind } from '@erg/spec/sensors';
import { EnergyInputError } from './errors';
import { summarize } from './stats';

export type { CampaignDataMovement, ConfigurationDataMovement, KindMovementSummary, PhaseMovementSummary } from '@erg/spec';

/** One configuration with its runs' data movement (computeRunDataMovement's results). */
export interface ConfigurationMovementRuns {
  key: string;
  runs: readonly RunDataMovement[];
}

/**
 * A campaign's data movement per configuration: per link kind, bytes, mean rate and J per GB per
 * run summarised (n, mean, spread, 95 % interval); the share of GPU busy time overlapped with
 * transfers; and per phase, its bytes beside its energy. A kind counts over the runs that measured
 * it (a run that measured PCIe and moved nothing counts 0 bytes, one without the sensor does not
 * count): configurations whose runs ran on different machines compare only what both measured.
 * Configurations without runs are left out.
 */
export function campaignDataMovement(configs: readonly ConfigurationMovementRuns[]): CampaignDataMovement {
  const seen = new Set<string>();
  for (const c of configs) {
    if (seen.has(c.key)) throw new EnergyInputError('ERG_ENERGY_BAD_ARGUMENT', `configuration key ${JSON.stringify(c.key)} appears twice; keys must be unique`);
    seen.add(c.key);
  }
  return { configurations: configs.filter((c) => c.runs.length > 0).map(summarizeConfiguration) };
}

function summarizeConfiguration(c: ConfigurationMovementRuns): ConfigurationDataMovement {
  const kinds: KindMovementSummary[] = [];
  for (const kind of LINK_KINDS) {
    const of = c.runs.map((r) => r.kinds.find((k) => k.kind === kind)).filter((k) => k !== undefined);
    if (of.length === 0) continue;
    kinds.push({
      kind,
      bytes: summarize(of.map((k) => k.bytes)),
      meanRateBps: summarize(of.map((k) => k.meanRateBps)),
      joulesPerGB: summarize(of.map((k) => k.joulesPerGB)),
    });
  }
  return {
    key: c.key,
    n: c.runs.length,
    energyJ: summarize(c.runs.map((r) => r.energyJ)),
    kinds,
    overlapFraction: summarize(c.runs.map((r) => r.overlap?.fraction ?? null)),
    phases: summarizePhases(c.runs),
  };
}

/**
 * Per phase over the runs that marked phases: a run in which a phase did not occur counts 0 s and
 * 0 bytes for it (as energy per phase counts it 0 J), so a phase that occurs in some repetitions
 * only has its mean pulled down, visibly, rather than inflated.
 */
function summarizePhases(runs: readonly RunDataMovement[]): PhaseMovementSummary[] | null {
  const marked = runs.filter((r) => r.phases !== null);
  if (marked.length === 0) return null;
  // Each run's phases by name, and the kinds each name moved bytes over in any run, built in one
  // pass: looking every name up in every run's list instead costs names × phases (issue 27).
  const byName = marked.map(() => new Map<string, PhaseDataMovement>());
  const kindsOf = new Map<string, Set<LinkKind>>();
  marked.forEach((r, i) => {
    for (const p of r.phases!) {
      const name = p.name;
      if (!byName[i]!.has(name)) byName[i]!.set(name, p);
      let kinds = kindsOf.get(name);
      if (!kinds) kindsOf.set(name, (kinds = new Set()));
      for (const kind of Object.keys(p.kinds) as LinkKind[]) kinds.add(kind);
    }
  });
  // A phase absent from a run had 0 J in it, where that run's energy per phase was attributed at all.
  const attributed = marked.map((r) => r.phases!.some((p) => p.energyJ !== null));
  const out = [...kindsOf].map(([name, kinds]) => {
    const occurrences = byName.map((m) => m.get(name));
    const bytes: PhaseMovementSummary['bytes'] = {};
    let total = 0;
    for (const kind of LINK_KINDS) {
      if (!kinds.has(kind)) continue;
      bytes[kind] = summarize(occurrences.map((p) => p?.kinds[kind]?.bytes ?? 0));
      total += bytes[kind].mean ?? 0;
    }
    return {
      summary: { name, energyJ: summarize(occurrences.map((p, i) => (p ? p.energyJ : attributed[i] ? 0 : null))), timeS: summarize(occurrences.map((p) => p?.timeS ?? 0)), bytes },
      total,
    };
  });
  out.sort((a, b) => Number(a.summary.name === UNMARKED_PHASE) - Number(b.summary.name === UNMARKED_PHASE) || b.total - a.total || (a.summary.name < b.summary.name ? -1 : 1));
  return out.map((p) => p.summary);
}
