import path from 'node:path';
import { FileReader } from '../read-file';
import type { SampleSink } from '../samples';
import { namedSensor, type SensorInfo } from '../wire';
import type { DetectContext, Source } from './types';

// Node-wide CPU utilisation from /proc/stat deltas and memory in use from /proc/meminfo.

const MEM_TOTAL = Buffer.from('MemTotal:');
const MEM_AVAILABLE = Buffer.from('MemAvailable:');

/** CPU utilisation (% of all cores) between successive reads of /proc/stat's first line. */
export class CpuStat {
  private readonly reader = new FileReader(512);
  private prevTotal = Number.NaN;
  private prevIdle = Number.NaN;

  constructor(private readonly file: string) {}

  /** Reads the counters; returns the utilisation since the previous call, NaN on the first call or without progress. */
  sample(): number {
    const r = this.reader;
    r.read(this.file);
    // "cpu  user nice system idle iowait irq softirq steal guest guest_nice"; guest time is already in user/nice.
    if (r.buf[0] !== 0x63 || r.buf[1] !== 0x70 || r.buf[2] !== 0x75 || r.buf[3] !== 0x20) return Number.NaN;
    let total = 0;
    let idle = 0;
    let at = 4;
    for (let field = 0; field < 8; field += 1) {
      const v = r.numberAt(at);
      if (!Number.isFinite(v)) {
        if (field < 4) return Number.NaN;
        break;
      }
      at = r.next;
      total += v;
      if (field === 3 || field === 4) idle += v;
    }
    const dTotal = total - this.prevTotal;
    const dIdle = idle - this.prevIdle;
    this.prevTotal = total;
    this.prevIdle = idle;
    if (!(dTotal > 0)) return Number.NaN;
    return Math.min(100, Math.max(0, (100 * (dTotal - dIdle)) / dTotal));
  }

  close(): void {
    this.reader.close();
  }
}

export interface ProcfsSource extends Source {
  /** The utilisation read in the current cycle (NaN if none); the power model uses it. */
  lastUtil(): number;
}

export function detectProcfs(ctx: DetectContext): ProcfsSource | null {
  const statFile = path.join(ctx.config.procfsRoot, 'stat');
  const meminfoFile = path.join(ctx.config.procfsRoot, 'meminfo');
  const cpu = new CpuStat(statFile);
  const mem = new FileReader(512);
  const sensors: SensorInfo[] = [];
  let hasCpu = false;
  let hasMem = false;
  try {
    cpu.sample(); // baseline, so the first cycle already has a delta
    hasCpu = true;
    sensors.push(namedSensor('cpu0.util', 'procfs', '%'));
  } catch (err) {
    ctx.note(`${statFile}: ${(err as Error).message}`);
  }
  const readMemUsed = (): number => {
    mem.read(meminfoFile);
    const a = mem.indexOf(MEM_TOTAL);
    const b = mem.indexOf(MEM_AVAILABLE);
    if (a < 0 || b < 0) return Number.NaN;
    const totalKb = mem.numberAt(a + MEM_TOTAL.length);
    const availableKb = mem.numberAt(b + MEM_AVAILABLE.length);
    return (totalKb - availableKb) * 1024;
  };
  try {
    if (!Number.isFinite(readMemUsed())) throw new Error('no MemTotal/MemAvailable');
    hasMem = true;
    sensors.push(namedSensor('node0.mem_used', 'procfs', 'B'));
  } catch (err) {
    ctx.note(`${meminfoFile}: ${(err as Error).message}`);
  }
  if (!hasCpu && !hasMem) return null;
  const memIndex = hasCpu ? 1 : 0;
  let util = Number.NaN;
  let readErrors = 0;
  return {
    name: 'procfs',
    sensors,
    details: { stat: hasCpu ? statFile : null, meminfo: hasMem ? meminfoFile : null },
    read(t: number, sink: SampleSink) {
      util = Number.NaN;
      if (hasCpu) {
        try {
          util = cpu.sample();
          if (Number.isFinite(util)) sink.push(0, t, util);
        } catch {
          readErrors += 1;
        }
      }
      if (hasMem) {
        try {
          sink.push(memIndex, t, readMemUsed());
        } catch {
          readErrors += 1;
        }
      }
    },
    lastUtil: () => util,
    stats: () => ({ readErrors }),
    stop() {
      cpu.close();
      mem.close();
    },
  };
}
