// @erg/sweep — turns a campaign's parameter space into configurations and runs, with stable keys.
export { type ParameterSpace } from './axes';
export { EXPANSION_LIMIT, checkCampaignSize, type SizeLimits } from './campaign-size';
export { DEFAULT_CONFIGURATION_KEY, configurationKey, parseConfigurationKey } from './configuration-key';
export {
  type Configuration,
  type RunSlot,
  COUNT_ENUMERATION_LIMIT,
  expandConfigurations,
  countConfigurations,
  expandRuns,
} from './expand';
export { type ValidateCampaignResult, validateCampaign, validateCampaignText } from './validate';
