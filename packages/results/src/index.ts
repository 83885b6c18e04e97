export { refreshRunEnergy, runEnergyView } from './run-energy';
export { campaignResultsView } from './campaign-results';
export { campaignVerdictView } from './campaign-verdict';
