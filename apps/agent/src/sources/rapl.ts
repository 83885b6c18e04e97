import fs from 'node:fs';
import path from 'node:path';
import { FileReader } from '../read-file';
import type { SampleSink } from '../samples';
import { sensorName, type SensorInfo } from '../wire';
import type { DetectContext, Source } from './types';

// Intel/AMD RAPL through powercap: /sys/class/powercap/intel-rapl:N (package-N) and its subzones
// intel-rapl:N:M (dram, core, uncore). energy_uj is a µJ counter that wraps at
// max_energy_range_uj; the raw counter is recorded and the server handles the wrap.

const ZONE_RE = /^intel-rapl:(\d+)(?::(\d+))?$/;

interface Zone {
  zone: string;
  name: string;
  file: string;
  readErrors: number;
}

export function detectRapl(ctx: DetectContext): Source | null {
  const classDir = path.join(ctx.config.sysfsRoot, 'sys/class/powercap');
  let top: string[];
  try {
    top = fs.readdirSync(classDir);
  } catch {
    ctx.note(`${classDir} does not exist`);
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

  const reader = new FileReader(128);
  const names = new Map<string, string>();
  const readName = (zone: string): string | undefined => {
    if (!names.has(zone)) {
      try {
        names.set(zone, reader.readText(path.join(dirs.get(zone) as string, 'name')));
      } catch {
        names.set(zone, '');
      }
    }
    return names.get(zone) || undefined;
  };

  const zones: Zone[] = [];
  const sensors: SensorInfo[] = [];
  const details: { zone: string; name: string; sensor: string; path: string; maxEnergyRangeUj: number | null }[] = [];
  const ignored: { zone: string; name: string; why: string }[] = [];
  for (const zone of ordered) {
    const dir = dirs.get(zone) as string;
    const name = readName(zone);
    if (!name) continue;
    const [, parent, sub] = ZONE_RE.exec(zone) as RegExpExecArray;
    let sensor: string | undefined;
    const pkg = /^package-(\d+)$/.exec(name);
    if (pkg && sub === undefined) sensor = sensorName('cpu', Number(pkg[1]), 'energy');
    else if (name === 'dram') {
      // DRAM belongs to the package whose zone it hangs under (package index from its name where possible).
      const parentPkg = /^package-(\d+)$/.exec(readName(`intel-rapl:${parent}`) ?? '');
      sensor = sensorName('memory', Number(parentPkg?.[1] ?? parent), 'energy');
    }
    if (!sensor) {
      ignored.push({ zone, name, why: 'only package and dram zones are recorded' });
      continue;
    }
    const file = path.join(dir, 'energy_uj');
    try {
      if (!Number.isFinite(reader.readNumber(file))) throw new Error('not a number');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      ignored.push({ zone, name, why: code === 'EACCES' ? 'energy_uj not readable (root only on most kernels)' : `energy_uj unreadable: ${(err as Error).message}` });
      continue;
    }
    if (sensors.some((s) => s.sensor === sensor)) {
      reader.forget(file);
      ignored.push({ zone, name, why: `duplicate of ${sensor}` });
      continue;
    }
    let maxUj = Number.NaN;
    try {
      maxUj = reader.readNumberOnce(path.join(dir, 'max_energy_range_uj'));
    } catch {
      // optional: without it the server cannot unwrap, so say so in meta
    }
    const info: SensorInfo = { sensor, source: 'rapl', unit: 'J' };
    if (Number.isFinite(maxUj) && maxUj > 0) info.wrapAt = maxUj / 1e6;
    sensors.push(info);
    zones.push({ zone, name, file, readErrors: 0 });
    details.push({ zone, name, sensor, path: file, maxEnergyRangeUj: Number.isFinite(maxUj) ? maxUj : null });
  }
  for (const i of ignored) ctx.note(`${i.zone} (${i.name}): ${i.why}`);
  if (zones.length === 0) {
    ctx.note(`no readable package/dram zone under ${classDir}`);
    return null;
  }
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
