import fs from 'node:fs';
import path from 'node:path';
import { FileReader } from '../read-file';
import type { SampleSink } from '../samples';
import { sensorName, type Component, type SensorInfo } from '../wire';
import type { DetectContext, Source } from './types';

// ACPI power meters exposed through hwmon (acpi_power_meter), as on GH200 nodes:
// /sys/class/hwmon/hwmonN/device/power1_average (µW, averaged by the firmware over
// power1_average_interval ms) labelled by power1_oem_info.

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

function numericSuffix(name: string): number {
  return Number(/(\d+)$/.exec(name)?.[1] ?? Number.NaN);
}

export function detectHwmon(ctx: DetectContext): Source | null {
  const classDir = path.join(ctx.config.sysfsRoot, 'sys/class/hwmon');
  let entries: string[];
  try {
    entries = fs.readdirSync(classDir).filter((e) => /^hwmon\d+$/.test(e)).sort((a, b) => numericSuffix(a) - numericSuffix(b));
  } catch {
    ctx.note(`${classDir} does not exist`);
    return null;
  }
  const reader = new FileReader(256);
  const meters: Meter[] = [];
  const sensors: SensorInfo[] = [];
  const ignored: { hwmon: string; label: string }[] = [];
  for (const hwmon of entries) {
    // The meter's attributes sit under device/ (acpi_power_meter); some kernels put them in the hwmon dir itself.
    const base = [path.join(classDir, hwmon, 'device'), path.join(classDir, hwmon)].find((d) => fs.existsSync(path.join(d, 'power1_average')));
    if (!base) continue;
    let label: string;
    try {
      label = reader.readText(path.join(base, 'power1_oem_info'));
    } catch {
      ignored.push({ hwmon, label: '(no power1_oem_info)' });
      continue;
    }
    const match = LABEL_RE.exec(label);
    if (!match) {
      ignored.push({ hwmon, label });
      continue;
    }
    const file = path.join(base, 'power1_average');
    try {
      if (!Number.isFinite(reader.readNumber(file))) throw new Error('not a number');
    } catch (err) {
      ctx.note(`${file} unreadable: ${(err as Error).message}`);
      continue;
    }
    let averageIntervalMs = Number.NaN;
    try {
      averageIntervalMs = reader.readNumberOnce(path.join(base, 'power1_average_interval'));
    } catch {
      // optional attribute
    }
    const sensor = sensorName(LABELS[match[1] as string] as Component, Number(match[2]), 'power');
    if (sensors.some((s) => s.sensor === sensor)) {
      reader.forget(file);
      ignored.push({ hwmon, label: `${label} (duplicate)` });
      continue;
    }
    sensors.push({ sensor, source: 'hwmon', unit: 'W' });
    meters.push({ hwmon, file, label, averageIntervalMs, last: Number.NaN, lastChangeT: Number.NEGATIVE_INFINITY, cachedRepeats: 0, readErrors: 0 });
  }
  if (meters.length === 0) {
    ctx.note(`no labelled power1_average under ${classDir}`);
    return null;
  }

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
        const m = meters[i] as Meter;
        let microwatts: number;
        try {
          microwatts = reader.readNumber(m.file);
        } catch {
          m.readErrors += 1;
          continue;
        }
        if (!Number.isFinite(microwatts)) {
          m.readErrors += 1;
          continue;
        }
        // A value read again before the firmware's averaging interval elapsed is its cached one:
        // still recorded (it is what the meter says), but counted so the reader of the data knows.
        if (microwatts === m.last) {
          if (t - m.lastChangeT < m.averageIntervalMs) m.cachedRepeats += 1;
        } else {
          m.last = microwatts;
          m.lastChangeT = t;
        }
        sink.push(i, t, microwatts / 1e6);
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
