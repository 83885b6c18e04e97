import { z } from 'zod';
import { Summary } from './summary';

/**
 * Energy per phase (issue 15 §2): how a run's energy divides among the phases its workload
 * marked (`begin NAME` / `end NAME`, nesting; see marks.ts) and what its steps cost, and the same
 * over a campaign's repetitions. @erg/energy computes them (computeRunPhases, campaignPhases)
 * with these types; the API serves them (GET /v1/runs/:id/phases).
 *
 * Words:
 *   leaf label   what a moment of a node's timeline is attributed to: the innermost phase open
 *                then, or "unmarked" when none is. The leaf labels partition the window.
 *   inclusive    a phase's own time and energy and those of the phases nested in it (energyJ, timeS).
 *   self         its leaf-label share only, nested phases excluded (selfEnergyJ, selfTimeS): the
 *                self energies of all phases plus unmarked add up to the run's energy (stacked bars).
 *   node-seconds times are summed over the nodes (and occurrences): a phase that runs 2 s on each
 *                of 4 nodes at once has timeS 8; meanPowerW is then one node's mean power in it.
 */

/**
 * How a phase's energy was attributed. regression: each leaf label's mean power estimated from
 * the sensors' readings by non-negative least squares (which resolves phases shorter than a
 * sampling interval statistically), times its duration, rescaled to the measured total.
 * proportional: each sampling interval's energy split among the labels by their share of it (no
 * resolution below the sampling interval): used where the readings cannot tell the labels apart.
 */
export const PhaseAttributionMethod = z.enum(['regression', 'proportional']);
export type PhaseAttributionMethod = z.infer<typeof PhaseAttributionMethod>;

/** The label of time inside no phase, where a list of phases needs a name for it (it cannot be a phase's: marks.ts MARK_NAME has no parentheses). */
export const UNMARKED_PHASE = '(unmarked)';

const ci95 = z
  .number()
  .nullable()
  .describe(
    "half-width (J) of the 95 % interval of the energy from the regression's residuals (how well the readings pin the split down, not the sensors' own error); null where it was attributed proportionally",
  );

/** One phase's energy in one run, summed over its occurrences and the nodes. */
export const PhaseEnergy = z
  .object({
    name: z.string(),
    occurrences: z.number().describe('begin/end pairs overlapping the window, over all nodes'),
    timeS: z.number().describe('inclusive time (node-seconds): while the phase was open, nested phases included, clipped to the window'),
    selfTimeS: z.number().describe('time (node-seconds) while it was the innermost open phase'),
    energyJ: z.number().describe('inclusive energy: its own and that of the phases nested in it'),
    selfEnergyJ: z.number().describe('exclusive energy: its leaf-label share; the self energies and unmarked add up to the run’s energyJ'),
    meanPowerW: z.number().nullable().describe('energyJ / timeS: one node’s mean power in the phase; null when timeS is 0'),
    share: z.number().nullable().describe('energyJ / the run’s energyJ (0–1); null when that is 0'),
    ci95J: ci95,
    selfCi95J: ci95,
    method: PhaseAttributionMethod.describe('proportional where any sensor’s readings could not separate the labels it is made of'),
  })
  .meta({ id: 'PhaseEnergy' });
export type PhaseEnergy = z.infer<typeof PhaseEnergy>;

/** The time inside no phase, and its energy. */
export const UnmarkedEnergy = z
  .object({
    timeS: z.number().describe('node-seconds of the window inside no phase'),
    energyJ: z.number(),
    meanPowerW: z.number().nullable().describe('null when timeS is 0'),
    share: z.number().nullable().describe('energyJ / the run’s energyJ; null when that is 0'),
    ci95J: ci95,
    method: PhaseAttributionMethod,
  })
  .meta({ id: 'UnmarkedEnergy' });
export type UnmarkedEnergy = z.infer<typeof UnmarkedEnergy>;

/** One figure over a run's steps. The nulls: no step was measured (n = 0). */
export const StepStatistics = z
  .object({
    n: z.number().describe('steps measured'),
    mean: z.number().nullable(),
    std: z.number().nullable().describe('sample standard deviation (divisor n − 1); 0 when n = 1'),
    p5: z.number().nullable().describe('5th percentile (linear interpolation between order statistics)'),
    p50: z.number().nullable().describe('median'),
    p95: z.number().nullable().describe('95th percentile'),
  })
  .meta({ id: 'StepStatistics' });
export type StepStatistics = z.infer<typeof StepStatistics>;

/** One step counter's steps: a step spans two consecutive `step NAME` marks of one node. */
export const StepEnergy = z
  .object({
    name: z.string().describe('the step counter’s name (`step` when the workload gave none)'),
    count: z.number().describe('step marks inside the window, over all nodes'),
    energyJ: StepStatistics.describe("one node's energy per step: its counters interpolated (or its power integrated) between the step's two marks"),
    timeS: StepStatistics.describe('time per step'),
    belowResolution: z
      .number()
      .describe("steps shorter than 2 sampling intervals of their node's slowest sensor: their energy is interpolated between readings, below what the sensors resolve"),
  })
  .meta({ id: 'StepEnergy' });
export type StepEnergy = z.infer<typeof StepEnergy>;

/** How one sensor's energy was divided among its node's leaf labels. */
export const PhaseFit = z
  .object({
    node: z.string(),
    sensor: z.string().describe('one of the sensors computeRunEnergy counts for the node'),
    energyJ: z.number().describe('the sensor’s energy over the window: what its labels’ energies add up to'),
    method: PhaseAttributionMethod,
    observations: z.number().describe('readings (intervals with a known energy) inside the window'),
    labels: z.number().describe('leaf labels on the node in the sensor’s span, unmarked included'),
    rescale: z
      .number()
      .describe(
        'what the labels’ estimates (fitted power × time, or energy read from the sensor’s curve) were multiplied by to add up to energyJ: 1 = they did already; ' +
          'a power sensor’s curve differs from its trapezoid total at the window’s edges',
      ),
  })
  .meta({ id: 'PhaseFit' });
export type PhaseFit = z.infer<typeof PhaseFit>;

/** A run's energy per phase and per step. */
export const RunPhases = z
  .object({
    timeS: z.number().describe('the window’s length'),
    energyJ: z.number().describe('the run’s energy over the window (computeRunEnergy’s energyJ): what the self energies and unmarked add up to'),
    method: PhaseAttributionMethod.describe('proportional where any phase’s is, or where nothing was regressed (no sensor, or told to)'),
    resolutionMs: z.number().nullable().describe('the slowest median sampling (or averaging) interval among the sensors used; null without readings'),
    rescale: z
      .number()
      .nullable()
      .describe('the sensors’ energy ÷ the sum of their labels’ estimates: the factor the estimates were scaled by overall (per sensor in fits); null where nothing was estimated'),
    phases: z.array(PhaseEnergy).describe('by inclusive energy, the largest first'),
    unmarked: UnmarkedEnergy,
    steps: z.array(StepEnergy).describe('by name'),
    fits: z.array(PhaseFit).describe('per node and sensor, how its energy was divided'),
    warnings: z.array(z.string()),
  })
  .meta({ id: 'RunPhases' });
export type RunPhases = z.infer<typeof RunPhases>;

/** One phase over a configuration's runs. A run in which it did not occur counts as 0 J and 0 s. */
export const PhaseSummary = z
  .object({
    name: z.string().describe(`a phase's name, or ${UNMARKED_PHASE} for the time inside none`),
    energyJ: Summary.describe('inclusive energy per run'),
    selfEnergyJ: Summary.describe('exclusive energy per run'),
    timeS: Summary.describe('inclusive node-seconds per run'),
  })
  .meta({ id: 'PhaseSummary' });
export type PhaseSummary = z.infer<typeof PhaseSummary>;

/** One configuration's phases over its runs. */
export const ConfigurationPhases = z
  .object({
    key: z.string(),
    n: z.number().describe('runs with phases'),
    energyJ: Summary.describe('the runs’ energy'),
    phases: z.array(PhaseSummary).describe(`by name, ${UNMARKED_PHASE} last`),
  })
  .meta({ id: 'ConfigurationPhases' });
export type ConfigurationPhases = z.infer<typeof ConfigurationPhases>;

/** How much of the energy difference between two configurations one phase accounts for. */
export const PhaseDifference = z
  .object({
    name: z.string().describe(`a phase's name, or ${UNMARKED_PHASE}`),
    runtimeOptimalJ: z.number().describe('mean self energy in the runtime-optimal configuration’s runs'),
    energyOptimalJ: z.number().describe('mean self energy in the energy-optimal configuration’s runs'),
    differenceJ: z.number().describe('runtimeOptimalJ − energyOptimalJ'),
    shareOfDifference: z
      .number()
      .nullable()
      .describe('differenceJ / the total difference; the shares add up to 1 (self energies partition a run’s energy); null when the total difference is 0'),
  })
  .meta({ id: 'PhaseDifference' });
export type PhaseDifference = z.infer<typeof PhaseDifference>;

/** Which phases explain the energy the runtime-optimal configuration spends beyond the energy-optimal one. */
export const PhaseComparison = z
  .object({
    runtimeOptimal: z.string().describe('configuration key'),
    energyOptimal: z.string().describe('configuration key'),
    differenceJ: z.number().describe('mean energy of the runtime-optimal configuration’s runs − that of the energy-optimal one’s'),
    phases: z
      .array(PhaseDifference)
      .describe('the phase that explains most of the difference first (by differenceJ in the direction of the total difference, then by name)'),
  })
  .meta({ id: 'PhaseComparison' });
export type PhaseComparison = z.infer<typeof PhaseComparison>;

/** A campaign's energy per phase: per configuration, and what separates its runtime- and energy-optimal configurations. */
export const CampaignPhases = z
  .object({
    configurations: z.array(ConfigurationPhases),
    comparison: PhaseComparison.nullable().describe('null when the campaign has no runtime- and energy-optimal configurations'),
  })
  .meta({ id: 'CampaignPhases' });
export type CampaignPhases = z.infer<typeof CampaignPhases>;
