// @erg/scheduler — submits pending runs to Slurm over SSH, tracks them to the end and finalizes them; exported for main.ts, tests and bench/.
export { startScheduler, type SchedulerHandle } from './worker';
export { parseSchedulerConfig, SchedulerConfig } from './config';
export { ClusterLinks } from './connections';
export { AgentBundle } from './agent-bundle';
export { SpecCache } from './spec-cache';
export { runCycle } from './cycle';
export { scanMetrics, localLogSource, clusterLogSource, type LogSource, type MetricScanLimits, type MetricScanOutcome } from './metric-scan';
export { UserRegexRunner, RegexBudget, RegexBudgetExceededError } from './regex-runner';
export { createSchedulerMetrics } from './metrics';
export { type SchedulerContext, type SchedulerHandles, createSchedulerContext } from './context';
export { AbsenceSightings } from './absence-sightings';
