// Typed client for erg's REST API. The types in ./generated are produced from the API's
// OpenAPI document by scripts/generate-client.js; a unit test fails when they are stale.
export { createErgClient, type ErgClient, type ErgClientOptions } from './client';
export { ErgApiError, type ErrorBody, type ErrorIssue } from './errors';
export type { paths, components } from './generated/api';

import type { components } from './generated/api';
type Schemas = components['schemas'];
/** Bodies the API accepts and returns, by their OpenAPI schema names. */
export type Cluster = Schemas['Cluster'];
export type ClusterCreate = Schemas['ClusterCreateInput'];
export type ClusterCredentials = Schemas['ClusterCredentialsInput'];
export type JumpHostCreate = Schemas['JumpHostCreateInput'];
export type Campaign = Schemas['Campaign'];
export type CampaignCreated = Schemas['CampaignCreated'];
export type CampaignDetail = Schemas['CampaignDetail'];
export type Run = Schemas['Run'];
export type RunSummary = Schemas['RunSummary'];
export type RunLogs = Schemas['RunLogs'];
export type TelemetryBatch = Schemas['TelemetryBatchInput'];
export type CampaignResults = Schemas['CampaignResults'];
export type CampaignVerdict = Schemas['CampaignVerdict'];
export type Suite = Schemas['Suite'];
export type SuiteCreate = Schemas['SuiteCreateInput'];
export type SuiteRun = Schemas['SuiteRun'];
/** The admins' dashboard: GET /v1/queue and the `data:` of GET /v1/events' `hello`, `run` and `power` events. */
export type Queue = Schemas['Queue'];
export type QueueRun = Schemas['QueueRun'];
export type QueueCluster = Schemas['QueueCluster'];
export type ConfigurationResult = Schemas['ConfigurationResult'];
export type HelloEvent = Schemas['HelloEvent'];
export type RunStateEvent = Schemas['RunStateEvent'];
export type PowerEvent = Schemas['PowerEvent'];
export type Token = Schemas['Token'];
export type TokenCreated = Schemas['TokenCreated'];
export type Project = Schemas['Project'];
export type Me = Schemas['Me'];
