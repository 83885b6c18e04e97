import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Database } from '@erg/db';
import type { SchedulerConfig } from './config';
import type { ClusterLinks } from './connections';
import type { SpecCache } from './spec-cache';

/** Everything a cycle needs, built once in main.ts and passed down. */
export interface SchedulerContext {
  config: SchedulerConfig;
  db: Database;
  redis: Redis;
  links: ClusterLinks;
  specs: SpecCache;
  log: Logger;
}
