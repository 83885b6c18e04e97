// @erg/results — energy results: a run's figures computed from its stored telemetry (energy,
// components, phases, data movement, power state, carbon and cost; stored in run_energy and
// recomputed when late telemetry makes them stale), and a campaign's statistics and Pareto front
// from the figures that count (countedRuns: the one rule of which runs' figures count, which the
// strategies and the verdicts use too). Reads through @erg/db, computes with @erg/energy.
export { refreshRunEnergy, refreshStaleRunEnergy, runEnergyView, STALE_REFRESH_LIMIT, type RefreshOptions, type StaleRefreshOptions } from './store-run-energy';
export { campaignResultsView, readCampaignFigureInputs } from './load-campaign-results';
export { CampaignInputsKeeper } from './inputs-snapshot';
export { campaignFiguresOf, countedRuns, type CampaignFigureInputs, type CampaignFigureOptions } from './campaign-figures';
export { runFiguresOf, figureSeries, figureSpan, EDGE_MARGIN_MS, MAX_ATTRIBUTED_MARKS, type RunFigureInputs, type FigureSeries, type StoredRunEnergy } from './run-figures';
export { readRunFigureInputs } from './store-run-energy';
export { countUnmeasured, unmeasuredListPath } from './unmeasured';
