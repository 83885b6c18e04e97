// The API's bodies as this CLI receives them. openapi-fetch hands out response data through its
// Readable<> mapping, which reads tuples (ci95: [lo, hi]) as plain arrays; these types accept both
// that and the schema types of @erg/client, so callers can pass either without a cast.
import type { components } from '@erg/client';

/** `T` with every tuple widened to an array, recursively. */
export type AsReceived<T> = T extends readonly (infer E)[] ? AsReceived<E>[] : T extends object ? { [K in keyof T]: AsReceived<T[K]> } : T;

type Schemas = components['schemas'];
export type CampaignResults = AsReceived<Schemas['CampaignResults']>;
export type ConfigurationResult = AsReceived<Schemas['ConfigurationResult']>;
export type Summary = AsReceived<Schemas['Summary']>;
export type CampaignVerdict = AsReceived<Schemas['CampaignVerdict']>;
export type MetricVerdict = AsReceived<Schemas['MetricVerdict']>;
export type Suite = AsReceived<Schemas['Suite']>;
export type SuiteRun = AsReceived<Schemas['SuiteRun']>;
export type Run = AsReceived<Schemas['Run']>;
export type RunEnergy = AsReceived<Schemas['RunEnergy']>;
export type RunPhasesView = AsReceived<Schemas['RunPhasesView']>;
export type RunPhases = AsReceived<Schemas['RunPhases']>;
export type CampaignPhases = AsReceived<Schemas['CampaignPhases']>;
export type ConfigurationPhases = AsReceived<Schemas['ConfigurationPhases']>;
export type PhaseComparison = AsReceived<Schemas['PhaseComparison']>;
export type CampaignDataMovement = AsReceived<Schemas['CampaignDataMovement']>;
export type ConfigurationDataMovement = AsReceived<Schemas['ConfigurationDataMovement']>;
export type CampaignDecisions = AsReceived<Schemas['CampaignDecisions']>;
