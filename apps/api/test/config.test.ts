import { z } from 'zod';
import { CAMPAIGN_LIMITS, DATABASE, LOGGING, parseEnv, QUEUE, SECRET_KEY } from '@erg/config';
import { parseApiConfig } from '../src/config';

describe('API configuration', () => {
  const env = { DATABASE_URL: 'postgresql://x@db:5432/erg', REDIS_URL: 'redis://r:6379', ERG_QUEUE_PREFIX: 'p1', ERG_MAX_RUNS: '50', LOG_LEVEL: 'debug', ERG_SECRET_KEY: 'k' };

  it('reads the blocks every erg process shares exactly as @erg/config defines them', () => {
    const shared = parseEnv(z.object({ ...DATABASE, ...QUEUE, ...SECRET_KEY, ...CAMPAIGN_LIMITS, ...LOGGING }), env, 'shared');
    const mine = parseApiConfig(env);
    for (const [key, value] of Object.entries(shared)) expect({ key, value: mine[key as keyof typeof mine] }).toEqual({ key, value });
  });

  it('takes campaigns of up to 100,000 runs unless ERG_MAX_RUNS says otherwise', () => {
    expect(parseApiConfig({}).ERG_MAX_RUNS).toBe(100_000);
  });

  it('refuses a bad value, naming the variable and the app', () => {
    expect(() => parseApiConfig({ ERG_MAX_RUNS: '0' })).toThrow(/^invalid API configuration:\n {2}ERG_MAX_RUNS: /);
  });
});
