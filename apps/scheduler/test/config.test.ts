import { z } from 'zod';
import { CAMPAIGN_LIMITS, DATABASE, LOGGING, parseEnv, QUEUE, SECRET_KEY } from '@erg/config';
import { parseSchedulerConfig } from '../src/config';

describe('scheduler configuration', () => {
  const env = { DATABASE_URL: 'postgresql://x@db:5432/erg', REDIS_URL: 'redis://r:6379', ERG_QUEUE_PREFIX: 'p1', ERG_MAX_RUNS: '50', LOG_LEVEL: 'debug', ERG_SECRET_KEY: 'k' };

  it('reads the blocks every erg process shares exactly as @erg/config defines them', () => {
    const shared = parseEnv(z.object({ ...DATABASE, ...QUEUE, ...SECRET_KEY, ...CAMPAIGN_LIMITS, ...LOGGING }), env, 'shared');
    const mine = parseSchedulerConfig(env);
    for (const [key, value] of Object.entries(shared)) expect({ key, value: mine[key as keyof typeof mine] }).toEqual({ key, value });
  });

  it("reads ERG_RUN_UMASK as octal (default 077: run directories are the cluster user's alone), never one that takes the owner's bits", () => {
    expect(parseSchedulerConfig({}).ERG_RUN_UMASK).toBe(0o077);
    expect(parseSchedulerConfig({ ERG_RUN_UMASK: '027' }).ERG_RUN_UMASK).toBe(0o027);
    expect(parseSchedulerConfig({ ERG_RUN_UMASK: '0007' }).ERG_RUN_UMASK).toBe(0o007);
    for (const bad of ['777', '0177', '8', 'u=rwx', '']) expect(() => parseSchedulerConfig({ ERG_RUN_UMASK: bad })).toThrow(/ERG_RUN_UMASK: an octal umask/);
  });

  it('refuses a bad value, naming the variable and the app', () => {
    expect(() => parseSchedulerConfig({ ERG_MAX_RUNS: '0' })).toThrow(/^invalid scheduler configuration:\n {2}ERG_MAX_RUNS: /);
  });
});
