import { EVENTS_CHANNEL } from './notify';

/**
 * The SQL expression that tells every API process someone's access changed (@erg/spec
 * AccessChangedNotice: `{ type: 'access', userId | tokenId }`), for a statement that makes the
 * change (`WITH t AS (UPDATE … RETURNING id) SELECT <this> FROM t`): the notice goes out when that
 * change commits, and only if it changed a row. Each API process re-checks its event streams of
 * that user or token on it (apps/api/src/event-hub.ts).
 */
export function accessNoticeSql(key: 'userId' | 'tokenId', idExpression: string): string {
  return `pg_notify('${EVENTS_CHANNEL}', json_build_object('type', 'access', '${key}', ${idExpression})::text)`;
}
