import fs from 'node:fs';
import path from 'node:path';
import { FileReader } from '../read-file';
import type { SampleSink } from '../samples';
import { namedSensor, sensorName, type Component, type SensorInfo } from '../wire';
import { declarableMs } from './sensor-timing';
import type { DetectContext, Source } from './types';

// ACPI power meters exposed through hwmon (acpi_power_meter), as on GH200 nodes:
// /sys/class/hwmon/hwmonN/device/power1_average (µW, averaged by the firmware over
// power1_average_interval ms, which each sensor declares as its averagingMs) labelled by
// power1_oem_info.
// detectHwmon lists the hwmon devices (listHwmons), describes the labelled meters
// (describeMeters) and returns the source that reads them (hwmonSource, readMeter).

const LABELS: Record<string, Component> = { Module: 'module', Grace: 'grace', CPU: 'cpu', SysIO: 'sysio' };
const LABEL_RE = /^(Module|Grace|CPU|SysIO) Power Socket (\d+)$/;

interface Meter {
  hwmon: string;
  file: string;
  label: string;
  /** Firmware averaging interval (ms); NaN when the file is missing. */
  averageIntervalMs: number;
  last: number;
  lastChangeT: number;
  cachedRepeats: number;
  readErrors: number;
}

/** A hwmon device that has a power meter erg does not record, and its label. */
interface IgnoredMeter {
  hwmon: string;
  label: string;
}

/** The meters found, in sensor order (`meters[i]` is `sensors[i]`). */
interface HwmonMeters {
  meters: Meter[];
  sensors: SensorInfo[];
  ignored: IgnoredMeter[];
}

export function detectHwmon(ctx: DetectContext): Source | null {
  const classDir = path.join(ctx.config.sysfsRoot, 'sys/class/hwmon');
  const entries = listHwmons(classDir);
  if (!entries) {
    ctx.note(`${classDir} does not exist`);
    return null;
  }
  const reader = new FileReader(256);
  const found = describeMeters(classDir, entries, reader, (message) => ctx.note(message));
  if (found.meters.length === 0) {
    ctx.note(`no labelled power1_average under ${classDir}`);
    return null;
  }
  return hwmonSource(found, reader);
}

/** hwmon0, hwmon1, … in numeric order; null without the class directory. */
function listHwmons(classDir: string): string[] | null {
  try {
    return fs.readdirSync(classDir).filter((e) => /^hwmon\d+$/.test(e)).sort((a, b) => numericSuffix(a) - numericSuffix(b));
  } catch {
    return null;
  }
}

function numericSuffix(name: string): number {
  return Number(/(\d+)$/.exec(name)?.[1] ?? Number.NaN);
}

/** One sensor per hwmon device whose power meter is labelled as one erg records and reads as a number. */
function describeMeters(classDir: string, entries: string[], reader: FileReader, note: (message: string) => void): HwmonMeters {
  const found: HwmonMeters = { meters: [], sensors: [], ignored: [] };
  for (const hwmon of entries) {
    const base = meterDir(classDir, hwmon);
    if (!base) continue;
    let label: string;
    try {
      label = reader.readText(path.join(base, 'power1_oem_info'));
    } catch {
      found.ignored.push({ hwmon, label: '(no power1_oem_info)' });
      continue;
    }
    const sensor = sensorOfLabel(label);
    if (!sensor) {
      found.ignored.push({ hwmon, label });
      continue;
    }
    const file = path.join(base, 'power1_average');
    try {
      if (!Number.isFinite(reader.readNumber(file))) throw new Error('not a number');
    } catch (err) {
      note(`${file} unreadable: ${(err as Error).message}`);
      continue;
    }
    const averageIntervalMs = averagingIntervalMs(reader, base);
    if (found.sensors.some((s) => s.sensor === sensor)) {
      reader.forget(file);
      found.ignored.push({ hwmon, label: `${label} (duplicate)` });
      continue;
    }
    // The firmware's averaging window ends at the reading: the sensor says how long it is
    // (power1_average_interval as read now; a meter without the file says nothing).
    const averagingMs = declarableMs(averageIntervalMs);
    found.sensors.push({ ...namedSensor(sensor, 'hwmon', 'W'), ...(averagingMs !== undefined ? { averagingMs } : {}) });
    found.meters.push({ hwmon, file, label, averageIntervalMs, last: Number.NaN, lastChangeT: Number.NEGATIVE_INFINITY, cachedRepeats: 0, readErrors: 0 });
  }
  return found;
}

/** Where the meter's attributes sit: under device/ (acpi_power_meter), or on some kernels in the hwmon dir itself; undefined when it has none. */
function meterDir(classDir: string, hwmon: string): string | undefined {
  return [path.join(classDir, hwmon, 'device'), path.join(classDir, hwmon)].find((d) => fs.existsSync(path.join(d, 'power1_average')));
}

/** `Module Power Socket 0` → module0.power; undefined for labels erg does not record. */
function sensorOfLabel(label: string): string | undefined {
  const match = LABEL_RE.exec(label);
  return match ? sensorName(LABELS[match[1] as string] as Component, Number(match[2]), 'power') : undefined;
}

/** The firmware's averaging interval (ms); NaN when the optional attribute is missing. */
function averagingIntervalMs(reader: FileReader, base: string): number {
  try {
    return reader.readNumberOnce(path.join(base, 'power1_average_interval'));
  } catch {
    return Number.NaN;
  }
}

/** Reads every meter once per cycle, in watts. */
function hwmonSource({ meters, sensors, ignored }: HwmonMeters, reader: FileReader): Source {
  return {
    name: 'hwmon',
    sensors,
    details: {
      meters: meters.map((m, i) => ({
        sensor: sensors[i]?.sensor,
        path: m.file,
        label: m.label,
        averageIntervalMs: Number.isFinite(m.averageIntervalMs) ? m.averageIntervalMs : null,
      })),
      ...(ignored.length > 0 ? { ignored } : {}),
    },
    read(t: number, sink: SampleSink) {
      for (let i = 0; i < meters.length; i += 1) {
        const microwatts = readMeter(meters[i] as Meter, reader, t);
        if (Number.isFinite(microwatts)) sink.push(i, t, microwatts / 1e6);
      }
    },
    stats() {
      return {
        cachedRepeats: meters.reduce((s, m) => s + m.cachedRepeats, 0),
        readErrors: meters.reduce((s, m) => s + m.readErrors, 0),
        perSensor: Object.fromEntries(meters.map((m, i) => [sensors[i]?.sensor, { cachedRepeats: m.cachedRepeats, readErrors: m.readErrors }])),
      };
    },
    stop() {
      reader.close();
    },
  };
}

/** One meter's value at cycle time `t` (µW), counted as a read error (and NaN) when it does not read as a number. */
function readMeter(m: Meter, reader: FileReader, t: number): number {
  let microwatts: number;
  try {
    microwatts = reader.readNumber(m.file);
  } catch {
    m.readErrors += 1;
    return Number.NaN;
  }
  if (!Number.isFinite(microwatts)) {
    m.readErrors += 1;
    return Number.NaN;
  }
  // A value read again before the firmware's averaging interval elapsed is its cached one:
  // still recorded (it is what the meter says), but counted so the reader of the data knows.
  if (microwatts === m.last) {
    if (t - m.lastChangeT < m.averageIntervalMs) m.cachedRepeats += 1;
  } else {
    m.last = microwatts;
    m.lastChangeT = t;
  }
  return microwatts;
}
