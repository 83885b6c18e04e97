import { parseSensorName } from './telemetry';

/** The last sample of one power sensor (`<component><index>.power`) on one node. */
export interface PowerReading {
  node: string;
  sensor: string;
  /** Unix ms of the sample. */
  t: number;
  /** Watts. */
  w: number;
}

/**
 * A run's total power now, from the last sample of each power sensor, summed over the terms that
 * computeRunEnergy counts toward energyJ, so that the live figure and the final energy never
 * disagree on what is included: per node its modules where it has any (a module covers its GPU,
 * Grace and memory); otherwise its GPUs, per CPU index the CPU reading else Grace, and memory
 * unless Grace (which includes it) was used. Node and SysIO meters are never added. `t` is the
 * newest sample counted; null when no counted sensor has a reading.
 */
export function livePower(readings: readonly PowerReading[]): { t: number; w: number } | null {
  const byNode = new Map<string, Map<string, PowerReading>>();
  for (const r of readings) {
    const name = parseSensorName(r.sensor);
    if (!name || name.quantity !== 'power' || !Number.isFinite(r.w)) continue;
    const devices = byNode.get(r.node) ?? new Map<string, PowerReading>();
    byNode.set(r.node, devices);
    const seen = devices.get(name.device);
    if (!seen || r.t > seen.t) devices.set(name.device, r);
  }
  let w = 0;
  let t = -Infinity;
  const count = (r: PowerReading | undefined) => {
    if (!r) return false;
    w += r.w;
    t = Math.max(t, r.t);
    return true;
  };
  for (const devices of byNode.values()) {
    const of = (component: string) =>
      [...devices.entries()].filter(([device]) => parseSensorName(`${device}.power`)?.component === component).map(([, r]) => r);
    const modules = of('module');
    if (modules.length > 0) {
      modules.forEach(count);
      continue;
    }
    of('gpu').forEach(count);
    let usedGrace = false;
    const cpuIndices = new Set([...of('cpu'), ...of('grace')].map((r) => parseSensorName(r.sensor)!.index));
    for (const i of cpuIndices) {
      if (count(devices.get(`cpu${i}`))) continue;
      usedGrace ||= count(devices.get(`grace${i}`));
    }
    if (!usedGrace) of('memory').forEach(count);
  }
  return t === -Infinity ? null : { t, w };
}
