import fs from 'node:fs';
import path from 'node:path';
import { FileReader } from '../read-file';
import type { SampleSink } from '../samples';
import { sensorName, type SensorInfo } from '../wire';
import { NO_READING, TrafficCounter } from './traffic-counter';
import type { DetectContext, Source } from './types';

// Inter-node traffic through the kernel's network interfaces (issue 28 §3): Ethernet, IPoIB,
// Slingshot's hsn* — whatever passes through the kernel's network stack (RDMA traffic does not:
// the infiniband source reads the ports' own counters) — as `nicN.net_tx` / `nicN.net_rx` (B/s,
// scope nic), N numbering the chosen interfaces in name order (meta.json names each). The
// counters are /sys/class/net/<if>/statistics/{tx,rx}_bytes: bytes, 64-bit (the kernel prints
// its rtnl_link_stats64 figures), each cycle's value the increase since the previous cycle over
// the time between them; a counter that goes backwards (the interface was re-created) makes that
// cycle a gap.
//
// Which interfaces (--net-interfaces, default auto):
//   auto   every interface except the loopback (`lo`: traffic that never leaves the node), and of
//          those only the physical ones (backed by a device: /sys/class/net/<if>/device exists)
//          where there are any — a bridge, bond, VLAN or veth on top of a physical interface
//          carries traffic that the physical one counts too, so adding both would count it
//          twice. Where there is none (a container or a network namespace with only a veth, as
//          the nodes of the multi-node local cluster), every non-loopback interface.
//   list   the names given (a trailing `*` matches a prefix: `hsn*`), whatever their kind.
// What is left out, and why, goes into meta.json's notes.
//
// Namespaces: the interfaces of /sys/class/net are those of the network namespace sysfs was
// mounted in, which is not the agent's when a namespace was entered without remounting /sys
// (`ip netns exec` remounts it; `unshare -n` alone does not). /proc/net/dev always lists the
// reading process's own. Where the two disagree, the agent reads /proc/net/dev instead (the same
// kernel figures) and says so.

const CLASS_DIR = 'sys/class/net';
const LOOPBACK = 'lo';
/** Sensor names number at most 1000 devices of a kind (SENSOR_NAME). */
const MAX_INTERFACES = 1000;

/** One chosen interface: its counters (tx, rx) and whether it is backed by a device. */
interface Interface {
  name: string;
  physical: boolean;
  tx: TrafficCounter;
  rx: TrafficCounter;
}

/** The parsed --net-interfaces: 'auto' or names and prefixes (`hsn*`). */
export type InterfaceChoice = 'auto' | readonly string[];

export function detectNet(ctx: DetectContext): Source | null {
  const classDir = path.join(ctx.config.sysfsRoot, CLASS_DIR);
  const procFile = path.join(ctx.config.procfsRoot, 'net/dev');
  const inSysfs = listDir(classDir);
  const inProc = readProcNetDev(procFile);
  if (inSysfs === null && inProc === null) {
    ctx.note(`neither ${classDir} nor ${procFile} can be read`);
    return null;
  }
  // /proc/net/dev is the agent's own namespace; sysfs may show another's (see the header).
  const fromProc = inProc !== null && (inSysfs === null || !sameSet(inSysfs, [...inProc.keys()]));
  if (fromProc && inSysfs === null) ctx.note(`${classDir} cannot be read; counters read from ${procFile} (every interface's kind unknown)`);
  if (fromProc && inSysfs !== null) ctx.note(`${classDir} lists ${inSysfs.join(', ') || 'nothing'} but ${procFile} lists ${[...inProc!.keys()].join(', ')}: /sys was mounted in another network namespace; counters read from ${procFile}`);
  const names = fromProc ? [...inProc!.keys()].sort() : inSysfs!;
  const physical = (name: string) => !fromProc && fs.existsSync(path.join(classDir, name, 'device'));
  const chosen = chooseInterfaces(names, physical, ctx.config.netInterfaces, ctx.note);
  if (chosen.length === 0) return null;
  if (chosen.length > MAX_INTERFACES) ctx.note(`${chosen.length - MAX_INTERFACES} interfaces beyond the first ${MAX_INTERFACES} left out`);

  const reader = new FileReader(64);
  const interfaces: Interface[] = [];
  for (const name of chosen.slice(0, MAX_INTERFACES)) {
    const dir = path.join(classDir, name, 'statistics');
    const iface: Interface = {
      name,
      physical: physical(name),
      tx: new TrafficCounter(fromProc ? `${procFile}:${name}:tx` : path.join(dir, 'tx_bytes'), 1, false),
      rx: new TrafficCounter(fromProc ? `${procFile}:${name}:rx` : path.join(dir, 'rx_bytes'), 1, false),
    };
    try {
      if (fromProc) {
        const [rx, tx] = inProc!.get(name)!;
        iface.tx.take(tx, Number.NaN);
        iface.rx.take(rx, Number.NaN);
      } else {
        iface.tx.start(reader);
        iface.rx.start(reader);
      }
    } catch (err) {
      ctx.note(`${name}: ${(err as Error).message}; left out`);
      continue;
    }
    interfaces.push(iface);
  }
  if (interfaces.length === 0) {
    reader.close();
    return null;
  }
  const sensors: SensorInfo[] = interfaces.flatMap((_, i) => [
    { sensor: sensorName('nic', i, 'net_tx'), source: 'net', unit: 'B/s', scope: 'nic' } as const,
    { sensor: sensorName('nic', i, 'net_rx'), source: 'net', unit: 'B/s', scope: 'nic' } as const,
  ]);
  const details = {
    counters: fromProc ? procFile : `${classDir}/<if>/statistics/{tx,rx}_bytes`,
    choice: ctx.config.netInterfaces === 'auto' ? 'auto' : ctx.config.netInterfaces.join(','),
    interfaces: interfaces.map((f, i) => ({ nic: `nic${i}`, name: f.name, kind: fromProc ? 'unknown' : f.physical ? 'physical' : 'virtual' })),
  };
  return new NetSource(interfaces, sensors, reader, details, fromProc ? procFile : null);
}

/**
 * The interfaces to read out of those present (sorted), as the header says; notes what is left
 * out. Pure but for `physical`, which asks sysfs.
 */
export function chooseInterfaces(names: readonly string[], physical: (name: string) => boolean, choice: InterfaceChoice, note: (m: string) => void): string[] {
  if (choice !== 'auto') {
    const matches = (name: string, pattern: string) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern);
    for (const pattern of choice) if (!names.some((n) => matches(n, pattern))) note(`--net-interfaces ${pattern}: no such interface (present: ${names.join(', ') || 'none'})`);
    return names.filter((n) => choice.some((p) => matches(n, p)));
  }
  const candidates = names.filter((n) => n !== LOOPBACK);
  if (names.includes(LOOPBACK)) note(`${LOOPBACK} left out (loopback: its traffic never leaves the node)`);
  if (candidates.length === 0) {
    note('no network interface but the loopback');
    return [];
  }
  const real = candidates.filter(physical);
  if (real.length === 0) return candidates;
  const virtual = candidates.filter((n) => !real.includes(n));
  if (virtual.length > 0) note(`virtual interfaces left out (their traffic also crosses a physical one, which counts it): ${virtual.join(', ')}; --net-interfaces chooses others`);
  return real;
}

/** Directory entries in name order; null when it cannot be read. */
function listDir(dir: string): string[] | null {
  try {
    return fs.readdirSync(dir).sort();
  } catch {
    return null;
  }
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && b.every((x) => a.includes(x));
}

/** /proc/net/dev's counters: interface → [rx bytes, tx bytes]; null when it cannot be read. */
export function readProcNetDev(file: string): Map<string, [number, number]> | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  return parseProcNetDev(text);
}

/**
 * Parses /proc/net/dev: two header lines, then `<name>: <rx bytes> <rx packets> … <tx bytes> …`
 * (eight receive columns, then transmit; the name right-aligned, with no space before the colon).
 */
export function parseProcNetDev(text: string): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0 || line.includes('|')) continue;
    const name = line.slice(0, colon).trim();
    const fields = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    if (name === '' || fields.length < 9) continue;
    out.set(name, [fields[0]!, fields[8]!]);
  }
  return out;
}

/** Reads every chosen interface's counters each cycle and pushes their rates. */
class NetSource implements Source {
  readonly name = 'net';
  private readErrors = 0;

  constructor(
    private readonly interfaces: Interface[],
    readonly sensors: readonly SensorInfo[],
    private readonly reader: FileReader,
    readonly details: Record<string, unknown>,
    /** /proc/net/dev where sysfs shows another namespace; null: sysfs. */
    private readonly procFile: string | null,
  ) {}

  read(t: number, sink: SampleSink): void {
    const proc = this.procFile === null ? null : readProcNetDev(this.procFile);
    if (this.procFile !== null && proc === null) this.readErrors += 1;
    for (let i = 0; i < this.interfaces.length; i++) {
      const f = this.interfaces[i]!;
      const values = proc?.get(f.name);
      this.readOne(f.tx, 2 * i, values?.[1], t, sink);
      this.readOne(f.rx, 2 * i + 1, values?.[0], t, sink);
    }
  }

  /** One counter: from its sysfs file, or from /proc/net/dev's value (undefined: not there this cycle). */
  private readOne(counter: TrafficCounter, local: number, procValue: number | undefined, t: number, sink: SampleSink): void {
    let rate: number;
    try {
      rate = this.procFile === null ? counter.step(this.reader, t) : counter.take(procValue ?? Number.NaN, t);
    } catch {
      this.readErrors += 1;
      return;
    }
    if (rate !== NO_READING) sink.push(local, t, rate);
  }

  stats(): Record<string, unknown> {
    return { readErrors: this.readErrors };
  }

  stop(): void {
    this.reader.close();
  }
}
