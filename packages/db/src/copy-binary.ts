/**
 * Postgres' binary COPY format, for the few column types erg bulk-loads. Writing it directly
 * spares both sides the text round trip (bytea as hex doubles the bytes and costs CPU on both).
 * Format: https://www.postgresql.org/docs/15/sql-copy.html ("Binary Format").
 */
export type CopyValue =
  | { type: 'uuid'; value: string }
  | { type: 'text'; value: string }
  | { type: 'int4'; value: number }
  | { type: 'float8'; value: number }
  | { type: 'bytea'; value: Buffer };

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

export function encodeCopyBinary(rows: CopyValue[][]): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.alloc(SIGNATURE.length + 8);
  SIGNATURE.copy(header, 0); // then flags (0) and header extension length (0)
  parts.push(header);
  for (const row of rows) {
    const count = Buffer.alloc(2);
    count.writeInt16BE(row.length);
    parts.push(count);
    for (const field of row) parts.push(...encodeField(field));
  }
  const trailer = Buffer.alloc(2);
  trailer.writeInt16BE(-1);
  parts.push(trailer);
  return Buffer.concat(parts);
}

function withLength(payload: Buffer): Buffer[] {
  const len = Buffer.alloc(4);
  len.writeInt32BE(payload.length);
  return [len, payload];
}

function encodeField(field: CopyValue): Buffer[] {
  switch (field.type) {
    case 'uuid':
      return withLength(Buffer.from(field.value.replace(/-/g, ''), 'hex'));
    case 'text':
      return withLength(Buffer.from(field.value, 'utf8'));
    case 'int4': {
      const b = Buffer.alloc(4);
      b.writeInt32BE(field.value);
      return withLength(b);
    }
    case 'float8': {
      const b = Buffer.alloc(8);
      b.writeDoubleBE(field.value);
      return withLength(b);
    }
    case 'bytea':
      return withLength(field.value);
  }
}
