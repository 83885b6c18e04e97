// @erg/config — the environment blocks every erg process shares, defined once: an app's config
// schema is its own fields spread over these (`z.object({ ...DATABASE, ...QUEUE, ... })`), and
// parseEnv turns a bad environment into one message listing every variable at fault.
import path from 'node:path';
import { z } from 'zod';

/** Empty counts as unset: compose files and systemd units pass unset variables as empty strings. */
const optional = z.preprocess((v) => (v === '' ? undefined : v), z.string().optional());

/** Where the record lives. */
export const DATABASE = {
  DATABASE_URL: z.string().default('postgresql://postgres@127.0.0.1:5432/erg'),
};

/** The work queue: every API and scheduler process of one erg uses the same Redis and prefix. */
export const QUEUE = {
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  /** Prefix of every BullMQ key; tests use a unique one each. */
  ERG_QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_:-]+$/).default('erg'),
};

/**
 * The key that seals stored secrets (clusters' private keys, webhook secrets): base64 of 32
 * bytes, inline or in a file (`openssl rand -base64 32`). The default file is the one
 * scripts/quickstart.sh and scripts/test.sh create for development (`.erg/secret.key` at the
 * repository root); production points ERG_SECRET_KEY_FILE elsewhere (e.g. /etc/erg/secret.key).
 * Without a key the apps refuse to start.
 */
export const SECRET_KEY = {
  ERG_SECRET_KEY: optional,
  // packages/config/{src,dist} → the repository root, as apps/*/{src,dist} would give.
  ERG_SECRET_KEY_FILE: z.string().min(1).default(path.resolve(__dirname, '..', '..', '..', '.erg', 'secret.key')),
  /** While rotating: the old key, accepted for opening only (`admin.js seal-secrets` re-seals with the new one). */
  ERG_SECRET_KEY_PREVIOUS: optional,
  ERG_SECRET_KEY_PREVIOUS_FILE: optional,
};

/** Largest campaign (configurations × repetitions) erg accepts: the API for POSTs, the scheduler for suites. */
export const CAMPAIGN_LIMITS = {
  ERG_MAX_RUNS: z.coerce.number().int().min(1).max(1_000_000).default(100_000),
};

/**
 * Phase marks: distinct mark names (phases and step counters) a run keeps; the marks of later
 * names are not stored and the run says so. The API (telemetry) and the scheduler (spools, log
 * phases, and job.sh, which tells the workload) must use the same value. The default is
 * @erg/spec's DEFAULT_MAX_PHASE_NAMES (a test keeps the two equal).
 */
export const MARK_LIMITS = {
  ERG_MAX_PHASE_NAMES: z.coerce.number().int().min(1).max(100_000).default(256),
};

export const LOGGING = {
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
};

/** Parses an app's environment with its schema; throws one Error listing every variable at fault. */
export function parseEnv<T extends z.ZodType>(schema: T, env: NodeJS.ProcessEnv, app: string): z.infer<T> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid ${app} configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}
