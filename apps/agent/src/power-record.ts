import fs from 'node:fs';
import { parsePowerRecord, type PowerRecord } from '@erg/spec/node-info';
import { errorMessage, type Logger } from './log';

// `<node>.power.json`: the record the site's node helper writes into the telemetry folder when
// it applied (or failed to apply) the run's power state, before the agents start. The agent reads
// it once and sends it with the fingerprint, so the run's data says what state it was measured in.

/** A record larger than this is not the helper's (one JSON line of a few hundred bytes): ignored. */
export const POWER_RECORD_MAX_BYTES = 64 * 1024;

/**
 * What the API's PowerRecordSchema accepts of the record's top-level strings. parsePowerRecord
 * checks the shape only; a longer `error` (the helper's own words) would make the API refuse the
 * whole first batch, sensors and all, so those are cut to fit.
 */
const TEXT_LIMITS = { node: 128, job: 64, error: 2000 } as const;

export type PowerRecordRead =
  | { status: 'absent'; record: null }
  | { status: 'read'; record: PowerRecord }
  | { status: 'ignored'; record: null; reason: string };

/** Reads the helper's record at `file`: absent when there is none; ignored (and said so) when it is unreadable, too large or not a record. */
export function readPowerRecord(file: string, log: Logger): PowerRecordRead {
  const ignored = (reason: string): PowerRecordRead => {
    log.warn('power record ignored', { file, reason });
    return { status: 'ignored', record: null, reason };
  };
  let text: string;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const { size } = fs.fstatSync(fd);
      if (size > POWER_RECORD_MAX_BYTES) return ignored(`${size} bytes: larger than ${POWER_RECORD_MAX_BYTES}`);
      text = fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'absent', record: null };
    return ignored(`unreadable: ${errorMessage(err)}`);
  }
  const record = parsePowerRecord(text.split('\n')[0] ?? '');
  if (record === null) return ignored('its first line is not a power record (ergPower 1, ok, node)');
  return { status: 'read', record: fitted(record) };
}

function fitted(record: PowerRecord): PowerRecord {
  const out = { ...record };
  for (const [key, max] of Object.entries(TEXT_LIMITS) as [keyof typeof TEXT_LIMITS, number][]) {
    const value = out[key];
    if (typeof value === 'string' && value.length > max) (out as Record<string, unknown>)[key] = value.slice(0, max);
  }
  return out;
}
