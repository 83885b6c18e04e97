// The API's bodies as the UI reads them: the generated client's types (from the API's OpenAPI
// document), plus the two the document leaves loose (telemetry series, a run's energy figures).
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

export interface TelemetrySeries {
  node: string;
  sensor: string;
  source: string | null;
  unit: string | null;
  samples: number;
  t: number[];
  v: number[];
}

/** GET /v1/runs/:id/telemetry. */
export interface Telemetry {
  runId: string;
  series: TelemetrySeries[];
}

/** GET /v1/runs/:id/energy (the stored result of packages/energy's computeRunEnergy). */
export interface RunEnergy {
  runId: string;
  computedAt: string;
  timeS: number;
  energyJ: number;
  edpJs: number;
  ed2pJs2: number;
  avgPowerW: number;
  method: string;
  coverage: number;
  components: Record<string, number>;
  breakdown?: Record<string, number>;
  warnings?: string[];
  gaps?: unknown[];
  idle?: { powerW: number; energyJ: number; netEnergyJ: number };
}

/** Events of GET /v1/events. */
export type ErgEvent =
  | { type: 'hello'; id: string | null; data: Schemas['HelloEvent'] }
  | { type: 'run'; id: string | null; data: Schemas['RunStateEvent'] }
  | { type: 'power'; id: string | null; data: Schemas['PowerEvent'] };

export const ACTIVE_STATES: readonly RunState[] = ['pending', 'submitting', 'queued', 'running', 'completing'];
export const FINISHED_STATES: readonly RunState[] = ['completed', 'failed', 'cancelled', 'timeout', 'node_fail', 'oom'];
export const RUN_STATES: readonly RunState[] = [...ACTIVE_STATES, ...FINISHED_STATES];
