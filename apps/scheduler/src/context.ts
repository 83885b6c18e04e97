import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Database } from '@erg/db';
import type { SecretBox } from '@erg/secrets';
import type { SchedulerConfig } from './config';
import type { ClusterLinks } from './connections';
import type { AgentBundle } from './agent-bundle';
import type { SpecCache } from './spec-cache';
import type { TelemetryWriter } from '@erg/db';
import type { SchedulerMetrics } from './metrics';
import type { UserRegexRunner } from './regex-runner';
import type { AbsenceSightings } from './absence-sightings';

/** Everything a cycle needs, built once in main.ts and passed down. */
export interface SchedulerContext {
  config: SchedulerConfig;
  db: Database;
  redis: Redis;
  links: ClusterLinks;
  specs: SpecCache;
  log: Logger;
  /** The telemetry agent staged to clusters; null runs jobs without telemetry. */
  agent: AgentBundle | null;
  /** Writes telemetry pulled from agents' spools. */
  telemetry: TelemetryWriter;
  /** Prometheus counters and histograms (served by main.ts when ERG_METRICS_PORT is not 0). */
  metrics: SchedulerMetrics;
  /** Worker threads where metric regexes (users' patterns) run under a time budget, off the event loop. */
  regexes: UserRegexRunner;
  /** Opens sealed secrets (webhook secrets here; private keys inside ClusterLinks). */
  secrets: SecretBox;
  /** Runs in doubt Slurm did not list, kept between reconciles: an absence counts once confirmed. */
  absences: AbsenceSightings;
}
