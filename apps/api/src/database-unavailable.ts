/**
 * Which failures mean "Postgres cannot be reached now" (restarting, crashed, the network between
 * us): the request may succeed if repeated in a few seconds, so the API answers 503 with
 * Retry-After instead of a 500 that says "see the log". Everything else stays a 500.
 */

/**
 * SQLSTATEs of a session that ended or could not start: class 08 (connection exception), 57P01
 * (terminated by an administrator: a fast shutdown), 57P02 (crash shutdown), 57P03 (cannot
 * connect now: starting up or shutting down).
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123])$/;
/** Socket errors of a connection that could not be made or was cut. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** pg's own errors (no code) for a client whose connection ended; Prisma may quote them in a longer message. */
const PG_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
];
/** Prisma's codes: P1001 cannot reach the server, P1002 timed out reaching it, P1017 it closed the connection. */
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1017']);
/** The driver adapter's kinds for the same (Prisma's meta.driverAdapterError.cause.kind). */
const ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout']);

interface Inspectable {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  kind?: unknown;
  originalCode?: unknown;
  meta?: { driverAdapterError?: { cause?: unknown } };
}

/** True when `err` (from pg, pg-pool or Prisma over its pg adapter) says Postgres is unreachable now. */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (err === null || typeof err !== 'object' || depth > 4) return false;
  const e = err as Inspectable;
  const code = typeof e.code === 'string' ? e.code : '';
  if (UNAVAILABLE_SQLSTATE.test(code) || SOCKET_CODES.has(code) || PRISMA_CODES.has(code)) return true;
  if (typeof e.kind === 'string' && ADAPTER_KINDS.has(e.kind)) return true;
  if (typeof e.originalCode === 'string' && UNAVAILABLE_SQLSTATE.test(e.originalCode)) return true;
  if (typeof e.message === 'string' && code === '' && PG_MESSAGES.some((m) => (e.message as string).includes(m))) return true;
  return isDatabaseUnavailable(e.meta?.driverAdapterError?.cause, depth + 1) || isDatabaseUnavailable(e.cause, depth + 1);
}
