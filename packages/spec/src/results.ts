import { z } from 'zod';
import { PowerStateSchema } from './telemetry';
import { CampaignPhases, RunPhases } from './phases';
import { CampaignDataMovement, RunDataMovement } from './data-movement';
import { Summary } from './summary';
import { Objective, RunCarbon, RunCost } from './carbon-cost';
import { CampaignClaims, CampaignDesignView, CampaignNodes, CampaignValidity, RunCooldown, RunValidity } from './claims';
import { TimeWindow } from './time-window';

/**
 * Energy results: one run's figures (what @erg/energy's computeRunEnergy returns and the API's
 * GET /v1/runs/:id/energy shows) and a campaign's (summaries per configuration, Pareto front,
 * best picks). @erg/energy computes them with these types; the API serves them with these
 * schemas; the web app and the CLI read them through the generated client. The contract for
 * every figure is docs/design.md, "Energy definitions".
 */

/**
 * How a figure was obtained, from the strongest claim to the weakest: every term read from a
 * hardware energy counter; at least one term integrated from power readings; at least one term
 * from a sensor whose source is a model (an estimate, not a measurement). Where nothing was
 * measured at all the method is 'integrated' (no claim of a counter) and coverage is 0.
 */
export const EnergyMethod = z.enum(['counter', 'integrated', 'model']);
export type EnergyMethod = z.infer<typeof EnergyMethod>;

export { TimeWindow } from './time-window';

/** A stretch of one sensor's window without usable samples: reported, never filled in. */
export const SensorGap = z
  .object({ fromMs: z.number(), toMs: z.number(), node: z.string(), sensor: z.string() })
  .meta({ id: 'SensorGap' });
export type SensorGap = z.infer<typeof SensorGap>;

const Joules = z.record(z.string(), z.number());

/** One node's energy over the run window. */
export const NodeEnergy = z
  .object({
    node: z.string(),
    energyJ: z.number(),
    method: EnergyMethod,
    coverage: z.number().describe('0–1: the minimum over the sensors used of the share of the window they cover; 0 when a GPU or module could not be measured at all'),
    sensorsUsed: z.array(z.string()).describe("the sensors whose energy makes up energyJ, e.g. ['module0.energy', 'module1.power']"),
    components: Joules.describe('J per component kind (module, gpu, cpu, grace, memory): exactly the terms that add up to energyJ'),
    breakdown: Joules.describe(
      'J per component kind for sensors measured but NOT counted in energyJ, for information only: on a module node the parts inside the modules ' +
        '(gpu, grace, cpu, sysio, memory and dram_estimate = Grace − CPU − SysIO); elsewhere a whole-node meter (node). Never add these to energyJ',
    ),
  })
  .meta({ id: 'NodeEnergy' });
export type NodeEnergy = z.infer<typeof NodeEnergy>;

/** One node's figures over the idle baseline: what a later run's cooldown compares that node with. */
export const IdleNodeFigures = z
  .object({
    node: z.string(),
    powerW: z.number().nullable().describe('mean power over the baseline window, by the same selection rules as the run; null: no power reading there'),
    coverage: z.number(),
    method: EnergyMethod,
    gpus: z
      .array(z.object({ gpu: z.int(), meanTempC: z.number(), maxTempC: z.number() }))
      .describe('each GPU with a temperature sensor (gpuN.temp): its mean and highest temperature over the baseline'),
  })
  .meta({ id: 'IdleNodeFigures' });
export type IdleNodeFigures = z.infer<typeof IdleNodeFigures>;

/** The idle baseline and the energy net of it. */
export const IdleEnergy = z
  .object({
    powerW: z.number().describe('mean power over the baseline window, summed over nodes, by the same selection rules as the run'),
    energyJ: z.number().describe('powerW × timeS: what the nodes would have used idling for the run’s duration'),
    netEnergyJ: z.number().describe('the run’s energyJ − this idle energy'),
    coverage: z.number().describe('coverage of the baseline window, as for the run'),
    method: EnergyMethod,
    nodes: z.array(IdleNodeFigures).optional().describe('per node; absent in figures computed before erg recorded them'),
  })
  .meta({ id: 'IdleEnergy' });
export type IdleEnergy = z.infer<typeof IdleEnergy>;

/**
 * Why a run's figures cannot be fully trusted (each comes with a warning that says why):
 * - too_short: the run lasted fewer than 10 sampling intervals, too few samples for its energy;
 * - negative_net_energy: idle-subtracted energy below 0 — the baseline drew more than the run;
 * - shared_node: other jobs ran on its node(s) during its window, so node-level sensors (module,
 *   Grace, RAPL package, the model) measured their work too;
 * - shared_idle_baseline: other jobs ran there during its idle baseline.
 * - missing_node: a node Slurm ran the job on sent no telemetry (its agent failed to start, or
 *   died before its first batch): energyJ is the other nodes' alone and lacks that node's energy;
 * - power_state_mismatch: the power state in force (the agents' enforced-limit and clock sensors,
 *   or the node helper's read-back) differs from what the campaign asked for;
 * - power_state_unverified: the campaign asked for a power state but nothing recorded what was in force;
 * - throttled: its GPUs were held down by power or heat (clock-event reasons) for more than the
 *   campaign's telemetry.maxThrottledShare of its window.
 * - invalid: its measurement failed one of the campaign's validity gates (validity.reasons says which).
 */
export const RunFlag = z.enum(['too_short', 'negative_net_energy', 'shared_node', 'shared_idle_baseline', 'missing_node', 'power_state_mismatch', 'power_state_unverified', 'throttled', 'invalid']);
export type RunFlag = z.infer<typeof RunFlag>;

/** One GPU's power state over a run's window, from its agent's sensors. Nulls: no such sensor. */
export const GpuPowerObserved = z
  .object({
    node: z.string(),
    gpu: z.number(),
    powerLimitW: z.number().nullable().describe('the enforced power limit in force for most of the window (its median)'),
    moduleLimitW: z.number().nullable().describe('the enforced module power limit (GH200), median'),
    smClockMaxMHz: z.number().nullable().describe('the highest SM clock sampled in the window'),
    appClockMHz: z.number().nullable().describe('the applications graphics clock, median'),
    maxTempC: z.number().nullable(),
    throttledShare: z.number().nullable().describe('0–1: share of the window with a throttling clock-event reason set (power cap — unless the campaign set one —, thermal, HW slowdown, power brake)'),
    throttleReasons: z.array(z.string()).describe('the throttling reasons that counted in throttledShare, e.g. ["sw_thermal_slowdown"] (a power cap the campaign set is expected, so not among them)'),
  })
  .meta({ id: 'GpuPowerObserved' });
export type GpuPowerObserved = z.infer<typeof GpuPowerObserved>;

/** What the run asked of the hardware and what was in force. */
export const RunPowerState = z
  .object({
    requested: PowerStateSchema
      .nullable()
      .describe("the campaign's power block for this configuration; null: it set none (the nodes ran in whatever state they were in)"),
    gpus: z.array(GpuPowerObserved),
    cpuMaxFreqKHz: z.record(z.string(), z.number().nullable()).describe("per node, the CPUs' maximum frequency the node helper read back (only when cpuFreqKHz was asked for)"),
  })
  .meta({ id: 'RunPowerState' });
export type RunPowerState = z.infer<typeof RunPowerState>;

/** What Slurm's own energy accounting says of the run, beside erg's figure. */
export const SlurmEnergy = z
  .object({
    energyJ: z.number().nullable().describe("sacct's ConsumedEnergyRaw; null when Slurm accounts no energy there"),
    ratio: z.number().nullable().describe("Slurm's figure / erg's energyJ"),
    note: z.string().describe('what the two figures mean side by side, or why Slurm has none'),
  })
  .meta({ id: 'SlurmEnergy' });
export type SlurmEnergy = z.infer<typeof SlurmEnergy>;

/** A run's energy figures over its window, as @erg/energy computes them. */
export const RunEnergy = z.object({
  timeS: z.number().describe('T, time-to-solution: the workload window’s length'),
  energyJ: z.number().describe('E, energy-to-solution, summed over nodes'),
  edpJs: z.number().describe('EDP = E · T'),
  ed2pJs2: z.number().describe('ED²P = E · T²'),
  avgPowerW: z.number().describe('E / T'),
  method: EnergyMethod.describe('the weakest method over the nodes: model, else integrated, else counter'),
  coverage: z.number().describe('0–1: the minimum over the nodes (and so over every sensor used); 0 with no nodes'),
  components: Joules.describe('J per component kind summed over nodes and indices; the values add up to energyJ'),
  breakdown: Joules.describe('informational energies not counted in energyJ (see NodeEnergy.breakdown), summed over nodes'),
  nodes: z.array(NodeEnergy),
  gaps: z.array(SensorGap),
  warnings: z.array(z.string()),
  flags: z.array(RunFlag).describe('why its figures cannot be fully trusted; a warning says more about each'),
  idle: IdleEnergy.optional(),
  power: RunPowerState.optional().describe('the power state asked for and in force; absent when neither was recorded'),
});
export type RunEnergy = z.infer<typeof RunEnergy>;

/** GET /v1/runs/:id/energy: the stored figures of a finished run, with what they were computed over. */
// runId and computedAt first: the serializer writes keys in the schema's order, and the answer
// has always begun with them.
export const RunEnergyView = z.object({
  runId: z.string(),
  computedAt: z.string().describe('when the figures were computed (ISO 8601); late telemetry recomputes them'),
  ...RunEnergy.shape,
  energyPerUnit: z
    .record(z.string(), z.number().nullable())
    .describe('J per unit of work, for every metric the campaign marks as counting work (null where the workload did not report it)'),
  window: TimeWindow.describe('the workload window, as the job script measured it'),
  idleWindow: TimeWindow.nullable().describe('the idle baseline window; null when the campaign has none'),
  slurmEnergy: SlurmEnergy,
  phases: RunPhases.nullable().describe('energy per phase and per step, where the workload marked phases (erg-mark, `import erg`, or the spec\'s `phases` regexes); null: no marks'),
  dataMovement: RunDataMovement.nullable().describe('bytes moved per link (PCIe, NVLink, C2C, host memory), J per GB, transfer overlap and bytes per phase; null: no node had a data-movement sensor'),
  carbon: RunCarbon.nullable().describe("gCO2e of the run with the intensity and PUE used, from its cluster's settings when its energy was computed; null: the cluster has no carbon settings (or the run none)"),
  cost: RunCost.nullable().describe("the run's cost with the prices used, from its cluster's price when its energy was computed; null: the cluster has no price"),
  stale: z
    .boolean()
    .describe('true: telemetry arrived after these figures were computed (a late batch); the scheduler recomputes them at its next tick (ERG_POLL_INTERVAL_MS) and these are the figures until then'),
  // The experiment's checks (issue 26) after every figure that was there before them.
  validity: RunValidity.optional().describe("the campaign's validity gates applied to this run's measurement; absent in figures computed before erg checked them"),
  cooldown: RunCooldown.nullable().describe("the wait before the run until its nodes were back near idle (the spec's cooldown), before its idle baseline and outside timeS; null: the campaign has none, or the job never reached it"),
}).meta({ id: 'RunEnergy' });
export type RunEnergyView = z.infer<typeof RunEnergyView>;

/** One stretch of a node's window with one innermost phase: what the web draws as bands over the power trace. */
export const PhaseSegment = z
  .object({
    node: z.string(),
    phase: z.string().nullable().describe('the innermost open phase; null: inside none'),
    open: z.array(z.string()).describe('every phase open, outermost first'),
    fromMs: z.number(),
    toMs: z.number(),
  })
  .meta({ id: 'PhaseSegment' });
export type PhaseSegment = z.infer<typeof PhaseSegment>;

/** Most segments GET /v1/runs/:id/phases returns: more cannot be told apart on a screen, and cost the response its size. */
export const MAX_PHASE_SEGMENTS = 5_000;

/** GET /v1/runs/:id/phases. */
export const RunPhasesView = z
  .object({
    runId: z.string(),
    computedAt: z.string().describe('when the figures were computed (with the run\'s energy)'),
    window: TimeWindow,
    marks: z
      .object({
        count: z.number().describe('marks stored for the run, every node'),
        nodes: z.array(z.string()).describe('nodes that marked'),
        writers: z.array(z.string()).describe('what wrote them: sh (erg-mark), py (import erg), log (the spec\'s phases regexes)'),
      }),
    phases: RunPhases.nullable().describe('null: the workload marked no phases'),
    segments: z.array(PhaseSegment).describe(`the window cut by innermost phase, per node, in time order; at most ${MAX_PHASE_SEGMENTS}`),
    segmentsTruncated: z.boolean().describe(`true when there were more than ${MAX_PHASE_SEGMENTS} (the first ones are returned)`),
  })
  .meta({ id: 'RunPhasesView' });
export type RunPhasesView = z.infer<typeof RunPhasesView>;

export { Summary } from './summary';

export const ConfigurationResult = z
  .object({
    key: z.string(),
    parameters: z.record(z.string(), z.unknown()),
    n: z.number().describe('completed runs with energy figures'),
    timeS: Summary,
    energyJ: Summary,
    edpJs: Summary,
    ed2pJs2: Summary,
    avgPowerW: Summary,
    metrics: z.record(z.string(), Summary),
    components: z
      .record(z.string(), Summary)
      .describe('energy (J) per component kind (gpu, cpu, memory, module, …) over the runs: the terms that add up to energyJ'),
    point: z.object({ timeS: z.number(), energyJ: z.number(), n: z.number() }).nullable().describe('mean time and energy over the runs that measured both'),
    paretoOptimal: z.boolean(),
    flaggedRuns: z.partialRecord(RunFlag, z.number()).describe('how many of its counted runs carry each flag (only flags some run carries), e.g. { shared_node: 3 }'),
    fingerprints: z.number().describe('distinct kinds of machine (fingerprint classes: hardware and software, not node names) its runs ran on'),
    fingerprintDifferences: z
      .array(z.string())
      .describe('how the kinds differ, e.g. "driverVersion: 550.54.15 (2 runs) vs 535.104.05 (1 run)"; empty when all runs ran on one kind'),
    fingerprint: z.string().nullable().describe('with ?groupBy=fingerprint: the fingerprint class these runs share; null otherwise'),
    id: z
      .string()
      .describe('what paretoFront, best, tradeoff and excluded name this entry by: its key; with ?groupBy=fingerprint `<key>@<first 12 characters of its fingerprint class>` (`@none`: runs whose agents sent none)'),
    carbon: Summary.describe('gCO2e per run, over the runs whose energy counts and whose cluster had carbon settings'),
    cost: Summary.describe("cost per run in the results' currency, over the runs with a cost (a price per kWh needs the run's energy to count)"),
  })
  .meta({ id: 'ConfigurationResult' });
export type ConfigurationResult = z.infer<typeof ConfigurationResult>;

/** The configurations that are best by one criterion each. */
export const BestOf = z
  .object({
    time: z.string().describe('least time; ties broken by less energy, then by key'),
    energy: z.string().describe('least energy; ties broken by less time, then by key'),
    edp: z.string().describe('least energy-delay product; ties broken by less time, then less energy, then key'),
    carbon: z.string().nullable().describe('least mean gCO2e; ties broken by less time, then key; null: no configuration has a carbon figure'),
    cost: z.string().nullable().describe('least mean cost; ties broken by less time, then key; null: no configuration has a cost'),
  })
  .describe('runtime-, energy-, EDP-, carbon- and cost-optimal configuration keys');
export type BestOf = z.infer<typeof BestOf>;

/** What choosing the most frugal configuration over the fastest one costs and saves. */
export const Tradeoff = z.object({
  fastest: z.string(),
  mostFrugal: z.string(),
  energySavedJ: z.number().describe('E(fastest) − E(mostFrugal), ≥ 0'),
  energySavedPct: z.number().nullable().describe('energySavedJ as a percentage of the fastest configuration’s energy; null when that is 0'),
  timeLostS: z.number().describe('T(mostFrugal) − T(fastest), ≥ 0'),
  timeLostPct: z.number().nullable().describe('timeLostS as a percentage of the fastest configuration’s time; null when that is 0'),
});
export type Tradeoff = z.infer<typeof Tradeoff>;

/** A configuration left out of the front and the best-of picks, and why. */
export const Exclusion = z.object({ key: z.string(), why: z.string() });
export type Exclusion = z.infer<typeof Exclusion>;

/** A completed run left out of its configuration's statistics, wholly or its energy figures only, and why. */
export const RunLeftOut = z.object({
  runId: z.string(),
  key: z.string(),
  repetition: z.number(),
  leftOut: z
    .enum(['run', 'energy'])
    .describe('run: every figure; energy: energy, EDP, ED²P, power, components and carbon, and cost where it is priced per kWh (its time still counts)'),
  why: z.string().describe('e.g. "no power samples inside its window"'),
});
export type RunLeftOut = z.infer<typeof RunLeftOut>;

/** What a search campaign's results count but do not list: its candidates not measured yet. */
export const UnmeasuredConfigurations = z
  .object({
    configurations: z.int().min(0).describe('candidates (entries, with ?groupBy=fingerprint) without a completed run'),
    list: z.string().describe('where to page through them: GET /v1/campaigns/{id}/configurations?measured=false'),
  })
  .meta({ id: 'UnmeasuredConfigurations' });
export type UnmeasuredConfigurations = z.infer<typeof UnmeasuredConfigurations>;

/** GET /v1/campaigns/:id/configurations: one page of a campaign's configurations and how many match in all. */
export const ConfigurationPage = z
  .object({
    items: z.array(
      z.object({
        key: z.string(),
        parameters: z.record(z.string(), z.unknown()),
        completedRuns: z.int().min(0).describe('its completed runs (0: not measured yet)'),
      }),
    ),
    total: z.int().min(0).describe('configurations that match, over every page'),
  })
  .meta({ id: 'ConfigurationPage' });
export type ConfigurationPage = z.infer<typeof ConfigurationPage>;

export const CampaignResults = z
  .object({
    campaignId: z.string(),
    configurations: z.array(ConfigurationResult),
    paretoFront: z
      .array(z.string())
      .describe('ids (configuration keys; see ConfigurationResult.id when grouped by fingerprint) of the Pareto-optimal configurations on the two objectives (default: mean time, mean energy), by the first'),
    best: BestOf.nullable(),
    tradeoff: Tradeoff.nullable(),
    excluded: z.array(Exclusion),
    runsLeftOut: z
      .array(RunLeftOut)
      .describe('completed runs whose figures do not count (the same rule regression verdicts use): a run never enters the statistics as 0 J'),
    groupedBy: z.enum(['configuration', 'fingerprint']).describe('configuration: one entry per configuration; fingerprint: one per configuration and kind of machine'),
    power: z
      .object({
        requested: z.boolean().describe('whether the campaign has a power block'),
        controlled: z.boolean().describe('whether erg set the power state (through the cluster\'s node helper)'),
        note: z.string(),
      })
      .describe('whether the figures were measured at a power state erg set, or at whatever state the nodes were in'),
    phases: CampaignPhases.nullable().describe('energy per phase per configuration, where the runs marked phases; null: none did'),
    objectives: z
      .tuple([Objective, Objective])
      .describe('what paretoFront and paretoOptimal were decided on (?objectives=, default time,energy); best, tradeoff and point are always on time and energy'),
    currency: z
      .string()
      .nullable()
      .describe("the currency of every cost (the runs' clusters' price), the one most runs' costs are in; a run priced in another (a price changed currency) has its cost left out (cost.n says how many count); null: no run has a cost"),
    dataMovement: CampaignDataMovement.nullable().describe('bytes per link kind, J per GB, transfer overlap and bytes per phase per configuration, over the runs whose energy counts; null: no run had a data-movement sensor'),
    design: CampaignDesignView.describe('the run order the runs followed (and its seed), the nodes they were balanced over, the confidence of the claims'),
    claims: CampaignClaims.nullable().describe('every comparison the results make, with its interval and whether it is distinguishable (Holm over all of them); null: fewer than 2 entries with a point'),
    validity: CampaignValidity.describe("the runs' validity and whether the results are publishable"),
    nodes: CampaignNodes.nullable().describe('the node effect, where counted runs ran on more than one node; null: one node (or none known)'),
    unmeasured: UnmeasuredConfigurations.optional().describe(
      "a search campaign's: its candidates without a completed run, counted here and left out of `configurations` and `excluded` (a search of 50,000 candidates measures a few hundred); absent for grid and adaptive campaigns, which list every configuration",
    ),
  })
  .meta({ id: 'CampaignResults' });
export type CampaignResults = z.infer<typeof CampaignResults>;
