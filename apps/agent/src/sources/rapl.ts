import fs from 'node:fs';
import path from 'node:path';
import { FileReader } from '../read-file';
import type { SampleSink } from '../samples';
import { namedSensor, sensorName, type SensorInfo } from '../wire';
import type { DetectContext, Source } from './types';

// Intel/AMD RAPL through powercap: /sys/class/powercap/intel-rapl:N (package-N) and its subzones
// intel-rapl:N:M (dram, core, uncore). energy_uj is a µJ counter that wraps at
// max_energy_range_uj; the raw counter is recorded and the server handles the wrap. Its sensors
// declare no updateMs: the kernel documents no update period, and the agent does not measure one.
// detectRapl finds the zones (findZoneDirs), describes the ones recorded (describeZones) and
// returns the source that reads them (raplSource).

const ZONE_RE = /^intel-rapl:(\d+)(?::(\d+))?$/;

/** A zone that is recorded. */
interface Zone {
  zone: string;
  name: string;
  file: string;
  readErrors: number;
}

/** What meta.json says of each recorded zone. */
interface ZoneDetail {
  zone: string;
  name: string;
  sensor: string;
  path: string;
  maxEnergyRangeUj: number | null;
}

/** A zone that is not recorded, and why. */
interface IgnoredZone {
  zone: string;
  name: string;
  why: string;
}

/** The zones found, in sensor order (`zones[i]` is `sensors[i]`). */
interface RaplZones {
  zones: Zone[];
  sensors: SensorInfo[];
  details: ZoneDetail[];
  ignored: IgnoredZone[];
}

export function detectRapl(ctx: DetectContext): Source | null {
  const classDir = path.join(ctx.config.sysfsRoot, 'sys/class/powercap');
  const dirs = findZoneDirs(classDir);
  if (!dirs) {
    ctx.note(`${classDir} does not exist`);
    return null;
  }
  const reader = new FileReader(128);
  const found = describeZones(dirs, reader);
  for (const i of found.ignored) ctx.note(`${i.zone} (${i.name}): ${i.why}`);
  if (found.zones.length === 0) {
    ctx.note(`no readable package/dram zone under ${classDir}`);
    return null;
  }
  return raplSource(found, reader);
}

/** Every zone's directory, zones before their subzones (intel-rapl:0, intel-rapl:0:0, intel-rapl:1, …); null without the class directory. */
function findZoneDirs(classDir: string): Map<string, string> | null {
  let top: string[];
  try {
    top = fs.readdirSync(classDir);
  } catch {
    return null;
  }
  // The class directory lists zones and subzones side by side; subzones also sit inside their
  // parent zone's directory, which is where a flattened copy may only have them.
  const dirs = new Map<string, string>();
  for (const entry of top) {
    if (!ZONE_RE.test(entry)) continue;
    dirs.set(entry, path.join(classDir, entry));
    try {
      for (const sub of fs.readdirSync(path.join(classDir, entry))) {
        if (ZONE_RE.test(sub) && !dirs.has(sub)) dirs.set(sub, path.join(classDir, entry, sub));
      }
    } catch {
      // not a directory
    }
  }
  const ordered = [...dirs.keys()].sort((a, b) => {
    const [, a1, a2] = ZONE_RE.exec(a) as RegExpExecArray;
    const [, b1, b2] = ZONE_RE.exec(b) as RegExpExecArray;
    return Number(a1) - Number(b1) || Number(a2 ?? -1) - Number(b2 ?? -1);
  });
  return new Map(ordered.map((zone) => [zone, dirs.get(zone) as string]));
}

/** Picks the package and dram zones whose counter reads, one sensor each. */
function describeZones(dirs: Map<string, string>, reader: FileReader): RaplZones {
  const nameOf = zoneNames(dirs, reader);
  const found: RaplZones = { zones: [], sensors: [], details: [], ignored: [] };
  for (const [zone, dir] of dirs) {
    const name = nameOf(zone);
    if (!name) continue;
    const sensor = sensorOfZone(zone, name, nameOf);
    if (!sensor) {
      found.ignored.push({ zone, name, why: 'only package and dram zones are recorded' });
      continue;
    }
    const file = path.join(dir, 'energy_uj');
    const unreadable = probeCounter(reader, file);
    if (unreadable) {
      found.ignored.push({ zone, name, why: unreadable });
      continue;
    }
    if (found.sensors.some((s) => s.sensor === sensor)) {
      reader.forget(file);
      found.ignored.push({ zone, name, why: `duplicate of ${sensor}` });
      continue;
    }
    const maxUj = maxEnergyRangeUj(reader, dir);
    const info: SensorInfo = namedSensor(sensor, 'rapl', 'J');
    if (Number.isFinite(maxUj) && maxUj > 0) info.wrapAt = maxUj / 1e6;
    found.sensors.push(info);
    found.zones.push({ zone, name, file, readErrors: 0 });
    found.details.push({ zone, name, sensor, path: file, maxEnergyRangeUj: Number.isFinite(maxUj) ? maxUj : null });
  }
  return found;
}

/** A zone's `name` file, read once per zone; undefined when it is missing or empty. */
function zoneNames(dirs: Map<string, string>, reader: FileReader): (zone: string) => string | undefined {
  const names = new Map<string, string>();
  return (zone) => {
    if (!names.has(zone)) {
      try {
        names.set(zone, reader.readText(path.join(dirs.get(zone) as string, 'name')));
      } catch {
        names.set(zone, '');
      }
    }
    return names.get(zone) || undefined;
  };
}

/** The sensor a zone measures: package-N → cpuN.energy, a dram subzone → memoryN.energy of its package; undefined for the rest. */
function sensorOfZone(zone: string, name: string, nameOf: (zone: string) => string | undefined): string | undefined {
  const [, parent, sub] = ZONE_RE.exec(zone) as RegExpExecArray;
  const pkg = /^package-(\d+)$/.exec(name);
  if (pkg && sub === undefined) return sensorName('cpu', Number(pkg[1]), 'energy');
  if (name === 'dram') {
    // DRAM belongs to the package whose zone it hangs under (package index from its name where possible).
    const parentPkg = /^package-(\d+)$/.exec(nameOf(`intel-rapl:${parent}`) ?? '');
    return sensorName('memory', Number(parentPkg?.[1] ?? parent), 'energy');
  }
  return undefined;
}

/** Why the zone's energy_uj cannot be recorded; undefined when it reads as a number. */
function probeCounter(reader: FileReader, file: string): string | undefined {
  try {
    if (!Number.isFinite(reader.readNumber(file))) throw new Error('not a number');
    return undefined;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'EACCES' ? 'energy_uj not readable (root only on most kernels)' : `energy_uj unreadable: ${(err as Error).message}`;
  }
}

/** The counter's wrap (µJ); NaN when the zone does not say, and the server then cannot unwrap (meta says so). */
function maxEnergyRangeUj(reader: FileReader, dir: string): number {
  try {
    return reader.readNumberOnce(path.join(dir, 'max_energy_range_uj'));
  } catch {
    return Number.NaN;
  }
}

/** Reads every zone's counter once per cycle, in joules. */
function raplSource({ zones, sensors, details, ignored }: RaplZones, reader: FileReader): Source {
  return {
    name: 'rapl',
    sensors,
    details: { zones: details, ...(ignored.length > 0 ? { ignored } : {}) },
    read(t: number, sink: SampleSink) {
      for (let i = 0; i < zones.length; i += 1) {
        const z = zones[i] as Zone;
        let uj: number;
        try {
          uj = reader.readNumber(z.file);
        } catch {
          z.readErrors += 1;
          continue;
        }
        if (Number.isFinite(uj)) sink.push(i, t, uj / 1e6);
        else z.readErrors += 1;
      }
    },
    stats() {
      return { readErrors: zones.reduce((s, z) => s + z.readErrors, 0) };
    },
    stop() {
      reader.close();
    },
  };
}
