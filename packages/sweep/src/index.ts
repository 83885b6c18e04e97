// @erg/sweep — turns a campaign's parameter space into configurations and runs, with stable keys.
export { type ParameterSpace } from './axes';
export { checkCampaignSize, measureCampaign, type CampaignSizeResult, type SizeLimits } from './campaign-size';
export { DEFAULT_CONFIGURATION_KEY, configurationKey, parseConfigurationKey } from './configuration-key';
export { type Configuration, type RunSlot, configurationsOf, expandConfigurations, countConfigurations, expandRuns } from './expand';
export { SPACE_WORK_BUDGET, SpaceIndex, SpaceTooComplexError } from './space-index';
export { type ValidateCampaignResult, validateCampaign, validateCampaignText } from './validate';
export { type OrderDesign, type OrderedRun, type RunsToAdd, addedRunOrder, blockOrder, campaignRunOrder, nodeForRun, settleDesign } from './run-order';
export { SeededStream } from './seeded-stream';
