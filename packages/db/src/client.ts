import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/client';

/**
 * The database handle every app passes down: Prisma for plain reads and writes, and the same
 * pg pool for the statements Prisma cannot express (claims with SKIP LOCKED, bulk transitions).
 */
export interface Database {
  prisma: PrismaClient;
  pool: pg.Pool;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** Pool size. Default 10. */
  max?: number;
}

export function createDatabase(url: string, options: DatabaseOptions = {}): Database {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10 });
  // An idle client losing its connection (Postgres restart) must not crash the process.
  pool.on('error', () => undefined);
  // The pool listens for 'error' only on idle clients: it removes that listener while a client is
  // checked out (withTransaction, the telemetry COPY, Prisma's transactions), and a pg Client that
  // emits 'error' with no listener ends the process. A backend ended while its client is checked
  // out (57P01 on a restart, a crash, a dropped socket) emits 'error' even when a query is running
  // (on the socket's end, after failing the query). So every client keeps a listener of its own for
  // life. Nothing is lost by ignoring the event: the query in progress, or the next one, fails with
  // the same error, and the client, no longer queryable, is discarded by the pool on release.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    prisma,
    pool,
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

/**
 * Runs `work` in one transaction on a client of its own: COMMIT when it resolves, ROLLBACK when it
 * throws (the original error is rethrown, not a failure of the ROLLBACK), the client released
 * either way.
 */
export async function withTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    try {
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  } finally {
    client.release();
  }
}
