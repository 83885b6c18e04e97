import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/client';

declare const databaseBrand: unique symbol;

/**
 * The database handle every app passes down. It is opaque: every read and write is a named
 * function of this package that takes the handle, so SQL and Prisma stay in packages/db. The
 * brand keeps any other object with a `close()` from passing for one.
 */
export interface Database {
  readonly [databaseBrand]: true;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** Pool size. Default 10. */
  max?: number;
}

/**
 * What the handle holds: Prisma for plain reads and writes, and the same pg pool for the
 * statements Prisma cannot express (claims with SKIP LOCKED, bulk transitions, COPY). Kept in a
 * WeakMap, not on the handle, so that nothing outside this package can reach either.
 */
interface Connections {
  prisma: PrismaClient;
  pool: pg.Pool;
}

const connections = new WeakMap<Database, Connections>();

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
  const db = {
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  } as Database;
  connections.set(db, { prisma, pool });
  return db;
}

function connectionsOf(db: Database): Connections {
  const found = connections.get(db);
  if (!found) throw new TypeError('not a Database made by createDatabase');
  return found;
}

/** The handle's Prisma client. Internal to packages/db: index.ts does not export it. */
export function prismaOf(db: Database): PrismaClient {
  return connectionsOf(db).prisma;
}

/** The handle's pg pool. Internal to packages/db: index.ts does not export it. */
export function poolOf(db: Database): pg.Pool {
  return connectionsOf(db).pool;
}

declare const transactionBrand: unique symbol;

/**
 * An open transaction handed to a caller's callback (NewCampaign.within), opaque like Database:
 * only functions of this package that take one can write in it.
 */
export interface Transaction {
  readonly [transactionBrand]: true;
}

/** The pg client behind a Transaction. Internal to packages/db. */
export function clientOf(tx: Transaction): pg.PoolClient {
  return tx as unknown as pg.PoolClient;
}

/** A pg client in a transaction, as the opaque Transaction a caller's callback gets. */
export function asTransaction(client: pg.PoolClient): Transaction {
  return client as unknown as Transaction;
}

/**
 * Runs `work` in one transaction on a client of its own: COMMIT when it resolves, ROLLBACK when it
 * throws (the original error is rethrown, not a failure of the ROLLBACK), the client released
 * either way.
 */
export async function withTransaction<T>(db: Database, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await poolOf(db).connect();
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
