// @erg/energy — pure energy math: integration, counters, data quality, run energy, energy per phase, data movement (bytes per link, J/GB), a run's power state, carbon and cost, statistics, Pareto front, the claims with their uncertainty and the node effects, downsampling.
export { type EnergyErrorCode, EnergyInputError } from './errors';
export {
  type Gap,
  type NodeTelemetry,
  type SensorInfo,
  type SensorName,
  type SensorSource,
  type Series,
  type Window,
  parseSensorName,
} from './telemetry';
export { DEFAULT_GAP_FACTOR } from './sampling';
export { type NodePower, gpuTemperatures, idleNodeFigures, meanNodePower } from './node-power';
export { type CoverageOptions, type IntegralResult, integratePower } from './integrate';
export { type CounterOptions, type CounterResult, counterEnergy, usableWrapAt } from './counter';
export { type RepeatedValues, type SamplePresence, expectedVsPresent, repeatedValues } from './quality';
export {
  type EnergyMethod,
  type IdleEnergy,
  type IdleNodeFigures,
  type NodeEnergy,
  type RunEnergy,
  type RunEnergyInput,
  type SensorGap,
  computeRunEnergy,
  perUnit,
} from './compute-run-energy';
export {
  type PhaseAttributionMethod,
  type PhaseEnergy,
  type PhaseFit,
  type PhaseMarkInput,
  type RunPhases,
  type RunPhasesInput,
  type SensorTiming,
  type StepEnergy,
  type StepStatistics,
  type UnmarkedEnergy,
  computeRunPhases,
  MIN_INTERVALS_PER_STEP,
  stepStatistics,
} from './phases';
export { MAX_REGRESSION_LABELS, MIN_DESIGN_EIGENVALUE, MIN_READINGS_PER_LABEL } from './phase-attribution';
export {
  type CampaignPhases,
  type ConfigurationPhaseRuns,
  type ConfigurationPhases,
  type OptimalConfigurations,
  type PhaseComparison,
  type PhaseDifference,
  type PhaseSummary,
  campaignPhases,
} from './phase-summary';
export { type PowerStateAssessment, type PowerStateInput, assessPowerState, LOCKED_CLOCK_SLACK_MHZ } from './power-state';
export { type Summary, summarize } from './stats';
export { type CountedFigures, type CountingOptions, type StoredFigures, type StoredValidity, countedFigures } from './counted-figures';
export { studentTQuantile, studentTCdf, studentTTwoSided, regularizedBeta, lnGamma } from './student-t';
export { type ChangeUnavailableReason, type LogRatio, type WelchResult, logRatioOfMeans, meanVar, pairedLogRatioOfMeans, welch } from './two-sample';
export { type BestOf, type ObjectivePoint, type Tradeoff, type TradeoffPoint, bestOf, paretoFront, paretoFrontOf, tradeoff } from './pareto';
export { type IntensityPoint, type RunCarbonInput, type RunCostInput, type SeriesIntensity, runCarbon, runCost, seriesIntensity } from './carbon-cost';
export {
  type CampaignResults,
  type CampaignResultsOptions,
  type ConfigurationResult,
  type ConfigurationRuns,
  type Exclusion,
  campaignResults,
  groupEntryId,
  MAX_FINGERPRINT_DIFFERENCES,
} from './summarize-campaign';
export { type RunFigures, objectiveFigure } from './run-figures';
export { type ClaimEntry, type ClaimsOptions, campaignClaims, holm, MAX_CLAIM_ENTRIES } from './claims';
export { type NodeRuns, campaignNodes, MAX_CONFOUNDED, MAX_NODE_EFFECTS } from './node-effects';
export { type Downsampled, lttb } from './lttb';
export { type PowerReading, livePower } from './live-power';
export { DEFAULT_POWER_AVERAGING_MS, sensorTimingOf } from './sensor-timing';
export { type NodeTimeline, type Segment as TimelineSegment, nodeTimeline } from './phase-timeline';
export {
  type GpuTransferOverlap,
  type LinkBytes,
  type LinkKindMovement,
  type PhaseDataMovement,
  type RunDataMovement,
  type RunDataMovementInput,
  type TransferOverlap,
  BUSY_UTIL_PCT,
  computeRunDataMovement,
  TRANSFER_RATE_BPS,
} from './data-movement';
export {
  type CampaignDataMovement,
  type ConfigurationDataMovement,
  type ConfigurationMovementRuns,
  type KindMovementSummary,
  type PhaseMovementSummary,
  campaignDataMovement,
} from './data-movement-summary';
export { type ClockOffset, type ValidityInput, counterDisagreement, idleCv, keptShare, longestGapMs, MAX_IDLE_BINS, MIN_COMPARED_SHARE, MIN_IDLE_BINS, runValidity } from './validity';
export { addValidityTallies, campaignValidity, tallyValidity, validityOfTally, type ValidityTally } from './campaign-validity';
