import fs from 'node:fs';
import path from 'node:path';
import { FileReader, readTextFile } from '../read-file';
import type { SampleSink } from '../samples';
import { sensorName, type SensorInfo } from '../wire';
import type { DetectContext, Source } from './types';

// Host memory traffic through the kernel's resctrl file system (Documentation/filesystems/resctrl.rst,
// "Memory Bandwidth Monitoring"), where it is mounted at /sys/fs/resctrl and monitoring lists
// `mbm_total_bytes` in info/L3_MON/mon_features (Intel RDT, AMD PQoS). Each monitoring group's
// `mon_data/mon_L3_NN/mbm_total_bytes` counts the bytes its tasks moved between the L3 cache
// domain NN and memory (reads and writes together), monotonically since the group was created.
// The root group counts the tasks of no other group, each other top-level (CTRL_MON) group its own
// and its MON groups': the node's traffic per domain is the sum over the root and the top-level
// groups that exist at detection. Per domain one sensor, `memoryNN.mem_traffic` (B/s, scope
// memory; NN is resctrl's L3 cache id, one per socket on most Intel servers), each cycle's value
// the counters' increase since the previous cycle over the time between them. A counter that goes
// backwards (its group was re-created) or reads "Unavailable" makes that cycle a gap for its domain.

const FEATURE = 'mbm_total_bytes';
const DOMAIN_RE = /^mon_L3_(\d+)$/;

/** One counter file: a group's count for one domain, and its previous value. */
interface Counter {
  file: string;
  prev: number;
}

/** One L3 domain: its sensor's local index and the counters that add up to it. */
interface Domain {
  id: number;
  counters: Counter[];
}

export function detectResctrl(ctx: DetectContext): Source | null {
  const root = path.join(ctx.config.sysfsRoot, 'sys/fs/resctrl');
  const features = readTextFile(path.join(root, 'info/L3_MON/mon_features'));
  if (features === null) {
    ctx.note(`${root}/info/L3_MON/mon_features does not exist (resctrl not mounted, or no monitoring)`);
    return null;
  }
  if (!features.split(/\s+/).includes(FEATURE)) {
    ctx.note(`${root}: monitoring lists no ${FEATURE} (${features.replace(/\s+/g, ' ').trim() || 'nothing'})`);
    return null;
  }
  const reader = new FileReader(64);
  const groups = [root, ...topLevelGroups(root)];
  const domains = new Map<number, Domain>();
  const unreadable: string[] = [];
  for (const group of groups) {
    const monData = path.join(group, 'mon_data');
    let entries: string[];
    try {
      entries = fs.readdirSync(monData);
    } catch {
      continue;
    }
    for (const entry of entries) {
      const m = DOMAIN_RE.exec(entry);
      if (!m) continue;
      const file = path.join(monData, entry, FEATURE);
      let value: number;
      try {
        value = reader.readNumber(file);
      } catch (err) {
        unreadable.push(`${file}: ${(err as Error).message}`);
        continue;
      }
      if (!Number.isFinite(value)) {
        // "Unavailable" (no hardware counter behind it yet) or "Unassigned" (mbm_event mode): resctrl.rst.
        reader.forget(file);
        unreadable.push(`${file}: ${readTextFile(file)?.trim() || 'not a number'}; left out`);
        continue;
      }
      const id = Number(m[1]);
      let domain = domains.get(id);
      if (!domain) domains.set(id, (domain = { id, counters: [] }));
      domain.counters.push({ file, prev: value });
    }
  }
  for (const u of unreadable) ctx.note(u);
  if (domains.size === 0) {
    ctx.note(`${root}: no readable mon_data/mon_L3_*/${FEATURE}`);
    reader.close();
    return null;
  }
  const ordered = [...domains.values()].sort((a, b) => a.id - b.id);
  const sensors: SensorInfo[] = ordered.map((d) => ({ sensor: sensorName('memory', d.id, 'mem_traffic'), source: 'resctrl', unit: 'B/s', scope: 'memory' }));
  return new ResctrlSource(ordered, sensors, reader, {
    root,
    groups: groups.map((g) => (g === root ? '/' : path.relative(root, g))),
    domains: ordered.map((d) => ({ id: d.id, sensor: sensorName('memory', d.id, 'mem_traffic'), files: d.counters.length })),
  });
}

/** Top-level directories that are monitoring groups (they have mon_data), other than info and the root's own. */
function topLevelGroups(root: string): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(root, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isDirectory() && !['info', 'mon_data', 'mon_groups'].includes(e.name) && fs.existsSync(path.join(root, e.name, 'mon_data')))
    .map((e) => path.join(root, e.name))
    .sort();
}

/** Reads every domain's counters each cycle and pushes their increase per second. */
class ResctrlSource implements Source {
  readonly name = 'resctrl';
  private prevMs = Number.NaN;
  private readErrors = 0;

  constructor(
    private readonly domains: Domain[],
    readonly sensors: readonly SensorInfo[],
    private readonly reader: FileReader,
    readonly details: Record<string, unknown>,
  ) {}

  read(t: number, sink: SampleSink): void {
    const seconds = (t - this.prevMs) / 1000;
    for (let i = 0; i < this.domains.length; i++) {
      let bytes = 0;
      let counted = 0;
      for (const c of (this.domains[i] as Domain).counters) {
        let v: number;
        try {
          v = this.reader.readNumber(c.file);
        } catch {
          this.readErrors += 1;
          continue;
        }
        // Unavailable (NaN) now or the cycle before, or a counter re-created: its increase this cycle is not known.
        if (Number.isFinite(v) && Number.isFinite(c.prev) && v >= c.prev) {
          bytes += v - c.prev;
          counted += 1;
        }
        c.prev = v;
      }
      // Only a whole domain is a reading: a part left out would look like less traffic (a gap says more).
      const domain = this.domains[i] as Domain;
      if (seconds > 0 && counted === domain.counters.length) sink.push(i, t, bytes / seconds);
    }
    this.prevMs = t;
  }

  stats(): Record<string, unknown> {
    return { readErrors: this.readErrors };
  }

  stop(): void {
    this.reader.close();
  }
}
