import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { TelemetryWriter, type Database } from '@erg/db';
import type { SecretBox } from '@erg/secrets';
import type { SchedulerConfig } from './config';
import { ClusterLinks } from './connections';
import { AgentBundle } from './agent-bundle';
import { SpecCache } from './spec-cache';
import { createSchedulerMetrics, type SchedulerMetrics } from './metrics';
import { UserRegexRunner } from './regex-runner';
import { EnergyRunner } from './energy-runner';
import { AbsenceSightings } from './absence-sightings';
import { SubmitLimits } from './submit-limits';

/** Everything a cycle needs, built once (createSchedulerContext) and passed down. */
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
  /** The worker thread where runs' energy figures are computed, off the event loop. */
  energy: EnergyRunner;
  /** Opens sealed secrets (webhook secrets here; private keys inside ClusterLinks). */
  secrets: SecretBox;
  /** Runs in doubt Slurm did not list, kept between reconciles: an absence counts once confirmed. */
  absences: AbsenceSightings;
  /** How much each cluster's site limits let the scheduler submit at once, learnt from refusals. */
  submitLimits: SubmitLimits;
}

/** What the caller owns and hands in: it opened them, it closes them. */
export interface SchedulerHandles {
  config: SchedulerConfig;
  db: Database;
  redis: Redis;
  secrets: SecretBox;
  log: Logger;
}

/**
 * The one place a scheduler's context is assembled (main.ts, the test harness and the submit
 * benchmark all build theirs here), from the handles the caller owns. What it makes itself —
 * SSH links, regex and energy worker threads — `close()` releases; the database and Redis stay the caller's.
 */
export function createSchedulerContext(handles: SchedulerHandles): SchedulerContext & { close(): Promise<void> } {
  const { config, db, secrets } = handles;
  const links = new ClusterLinks(config.ERG_SSH_MAX_SESSIONS, secrets, config.ERG_RUN_UMASK);
  // Workers start on first use; idle ones do not keep the process alive.
  const regexes = new UserRegexRunner({ workers: config.ERG_REGEX_WORKERS });
  const energy = new EnergyRunner({ databaseUrl: config.DATABASE_URL, maxHeapMb: config.ERG_ENERGY_HEAP_MB, fallbackDb: db, warn: (m) => handles.log.warn(m) });
  return {
    ...handles,
    links,
    specs: new SpecCache(db),
    agent: config.ERG_TELEMETRY === 'on' ? new AgentBundle(config.ERG_RUN_UMASK) : null,
    telemetry: new TelemetryWriter(db, { maxPhaseNames: config.ERG_MAX_PHASE_NAMES }),
    metrics: createSchedulerMetrics(),
    regexes,
    energy,
    absences: new AbsenceSightings(),
    submitLimits: new SubmitLimits(),
    async close() {
      await links.closeAll();
      await regexes.close();
      await energy.close();
    },
  };
}
