// @erg/results — the glue between the database and the pure math: loads a run's telemetry or a
// campaign's figures through @erg/db, computes with @erg/energy and @erg/regress, stores or
// returns what the API serves.
export { refreshRunEnergy, refreshStaleRunEnergy, runEnergyView, STALE_REFRESH_LIMIT, type RefreshOptions } from './store-run-energy';
export { campaignResultsView } from './load-campaign-results';
export { campaignVerdictView, sequentialCampaignVerdict } from './judge-campaign';
export { adaptCampaign, type AdaptOptions, type AdaptStep, type SearchStepRunner } from './adapt-campaign';
export { SearchStepFailed } from './search-campaign';
export { campaignDecisionsView } from './decisions-view';
