import { poolOf, type Database } from './client';

/**
 * One answer for a readiness probe: 'ok' when Postgres answered `SELECT 1` within `timeoutMs`,
 * else `error: <why>`. Bounded: with every pooled client busy, or a connect hanging, the probe
 * would wait for one, and a readiness check that does not answer is worse than a "no".
 */
export async function checkDatabase(db: Database, timeoutMs = 2000): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
  });
  const query = poolOf(db).query('SELECT 1');
  query.catch(() => undefined); // abandoned after the deadline: its late failure is not unhandled
  try {
    await Promise.race([query, deadline]);
    return 'ok';
  } catch (err) {
    return `error: ${(err as Error).message}`;
  } finally {
    clearTimeout(timer);
  }
}
