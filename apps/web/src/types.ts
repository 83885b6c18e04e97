// The API's bodies as the UI reads them: the generated client's types (from the API's OpenAPI
// document, built from @erg/spec's schemas), under the names the UI uses.
import type { components } from '@erg/client';

type Schemas = components['schemas'];

export type Summary = Schemas['Summary'];
export type Cluster = Schemas['Cluster'];
export type Campaign = Schemas['Campaign'];
export type CampaignDetail = Schemas['CampaignDetail'];
export type RunSummary = Schemas['RunSummary'];
export type RunLogs = Schemas['RunLogs'];
export type RunState = RunSummary['state'];
/** A configuration's results; `components` holds the energy per component kind (J). */
export type ConfigurationResult = Schemas['ConfigurationResult'];
export type CampaignResults = Schemas['CampaignResults'];
/** GET /v1/runs/:id: the run with its workload and idle windows (ISO 8601) and queue facts. */
export type Run = Schemas['Run'];
export type QueueCluster = Schemas['QueueCluster'];
export type QueueRun = Schemas['QueueRun'];
/** GET /v1/queue. */
export type Queue = Schemas['Queue'];

export type TelemetrySeries = Schemas['TelemetrySeries'];
/** GET /v1/runs/:id/telemetry. */
export type Telemetry = Schemas['RunTelemetry'];
/** GET /v1/runs/:id/energy (the stored result of packages/energy's computeRunEnergy). */
export type RunEnergy = Schemas['RunEnergy'];
/** GET /v1/runs/:id/phases: the run's energy per phase and its window cut by innermost phase per node. */
export type RunPhasesView = Schemas['RunPhasesView'];
/** A run's energy per phase and per step (null in RunPhasesView when nothing was marked). */
export type RunPhases = Schemas['RunPhases'];
export type PhaseSegment = Schemas['PhaseSegment'];
/** CampaignResults.phases: per configuration and phase, and what separates the runtime- and energy-optimal configurations. */
export type CampaignPhases = Schemas['CampaignPhases'];
export type PhaseComparison = Schemas['PhaseComparison'];

/** CampaignResults.dataMovement: per configuration, bytes per link kind, J per GB, transfer overlap and bytes per phase. */
export type CampaignDataMovement = Schemas['CampaignDataMovement'];
export type ConfigurationDataMovement = Schemas['ConfigurationDataMovement'];
export type KindMovementSummary = Schemas['KindMovementSummary'];
export type PhaseMovementSummary = Schemas['PhaseMovementSummary'];
/** RunEnergy.dataMovement: a run's bytes per link (kind, node, device), overlap and bytes per phase. */
export type RunDataMovement = Schemas['RunDataMovement'];
export type LinkKindMovement = Schemas['LinkKindMovement'];
export type LinkBytes = Schemas['LinkBytes'];
export type TransferOverlap = Schemas['TransferOverlap'];
export type PhaseDataMovement = Schemas['PhaseDataMovement'];
/** A kind of link: pcie, nvlink, c2c (NVLink-C2C), memory (host memory). */
export type LinkKind = KindMovementSummary['kind'];
/** RunEnergy.carbon and .cost: a run's gCO2e and cost with what they were computed with. */
export type RunCarbon = Schemas['RunCarbon'];
export type RunCost = Schemas['RunCost'];

/** Events of GET /v1/events. */
export type ErgEvent =
  | { type: 'hello'; id: string | null; data: Schemas['HelloEvent'] }
  | { type: 'run'; id: string | null; data: Schemas['RunStateEvent'] }
  | { type: 'power'; id: string | null; data: Schemas['PowerEvent'] };

// The state sets of @erg/spec (its dependency-free subpath, so no zod in the bundle).
export { RUN_STATES, TERMINAL_RUN_STATES, UNFINISHED_RUN_STATES, isUnfinishedRunState } from '@erg/spec/run-state';
/** GET /v1/campaigns/:id/decisions: an adaptive campaign's decisions per configuration, runs used against the grid. */
export type CampaignDecisions = Schemas['CampaignDecisions'];
export type ConfigurationDecision = Schemas['ConfigurationDecision'];
