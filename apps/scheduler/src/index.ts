export { startScheduler, type SchedulerHandle } from './worker';
export { parseSchedulerConfig, SchedulerConfig } from './config';
export { ClusterLinks } from './connections';
export { AgentBundle } from './agent-bundle';
export { SpecCache } from './spec-cache';
export { runCycle } from './cycle';
export { extractMetrics, parseTiming } from './outputs';
export type { SchedulerContext } from './context';
