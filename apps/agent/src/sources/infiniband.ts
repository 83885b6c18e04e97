import fs from 'node:fs';
import path from 'node:path';
import { FileReader, readTextFile } from '../read-file';
import type { SampleSink } from '../samples';
import { sensorName, type SensorInfo } from '../wire';
import { NO_READING, SATURATED, TrafficCounter } from './traffic-counter';
import type { DetectContext, Source } from './types';

// Inter-node traffic through RDMA ports (issue 28 §3): every port of every device under
// /sys/class/infiniband (InfiniBand HCAs, RoCE NICs, EFA), as `ibN.ib_tx` / `ibN.ib_rx` (B/s,
// scope ib), N numbering the (device, port) pairs in name order (meta.json names each). The
// port's own counters count RDMA traffic, which bypasses the kernel's network stack and so the
// net source's interface counters.
//
// Which counter (drivers/infiniband/core/sysfs.c, checked against torvalds/linux), per port, the first that reads:
//   1. counters_ext/port_{xmit,rcv}_data_64 — 64-bit, in 4-byte words: older kernels with
//      Mellanox OFED's extended group.
//   2. counters/port_{xmit,rcv}_data — in 4-byte words ("octets divided by 4", IBTA
//      PortXmitData/PortRcvData), read through a PerfMgt MAD on every read. The kernel picks the
//      group by the PMA's ClassPortInfo: with IB_PMA_CLASS_CAP_EXT_WIDTH they come from
//      PortCountersExtended (64 bits), and only that group has counters/unicast_xmit_packets;
//      with CAP_EXT_WIDTH_NOIETF also 64 bits but under the same names as the 32-bit group; else
//      PortCounters' 32-bit counters, which stop at 2³² − 1 words (16 GiB: well under a second
//      at HDR rates) until someone resets them. So without unicast_xmit_packets the width is
//      unknown and the counter is taken to be 32 bits, saturating, until a value shows otherwise
//      (traffic-counter.ts). A port without a PMA makes the read fail (EINVAL; older kernels
//      print "N/A (no PMA)").
//   3. hw_counters/{tx,rx}_bytes — the driver's own byte counters (EFA, whose ports have no PMA),
//      64-bit. Also taken over a counters/ pair of unknown width, which could saturate.
// A counter saturated already at detection is left out, with a note; one that saturates during
// the run is dropped from then on (its reason goes into stats.json), never reported as a figure.

const CLASS_DIR = 'sys/class/infiniband';
/** The driver's byte counters in hw_counters (EFA's names). */
const HW_TX = 'hw_counters/tx_bytes';
const HW_RX = 'hw_counters/rx_bytes';
/** Sensor names number at most 1000 devices of a kind (SENSOR_NAME). */
const MAX_PORTS = 1000;

/** Which files a port's two counters are read from, and how. */
interface CounterChoice {
  kind: 'counters_ext' | 'counters (64-bit)' | 'counters (32-bit or unknown width)' | 'hw_counters';
  tx: string;
  rx: string;
  bytesPerUnit: number;
  saturates: boolean;
}

/** A port as found: its device, number and what it says of itself. */
interface Port {
  device: string;
  port: number;
  dir: string;
}

/** A port being read: its sensors' local indices (-1: that direction left out or dropped) and counters. */
interface PortReading {
  counters: [TrafficCounter | null, TrafficCounter | null];
  locals: [number, number];
}

export function detectInfiniband(ctx: DetectContext): Source | null {
  const root = path.join(ctx.config.sysfsRoot, CLASS_DIR);
  const ports = listPorts(root, ctx);
  if (ports === null) return null;
  if (ports.length === 0) {
    ctx.note(`${root}: no device has ports`);
    return null;
  }
  const reader = new FileReader(64);
  const sensors: SensorInfo[] = [];
  const readings: PortReading[] = [];
  const described: Record<string, unknown>[] = [];
  for (const [index, p] of ports.entries()) {
    if (index >= MAX_PORTS) {
      ctx.note(`${ports.length - MAX_PORTS} ports beyond the first ${MAX_PORTS} left out`);
      break;
    }
    const choice = chooseCounters(p.dir, reader);
    if (typeof choice === 'string') {
      ctx.note(`${p.device} port ${p.port}: ${choice}`);
      continue;
    }
    const reading: PortReading = { counters: [null, null], locals: [-1, -1] };
    (['tx', 'rx'] as const).forEach((direction, i) => {
      const counter = new TrafficCounter(choice[direction], choice.bytesPerUnit, choice.saturates);
      let first: number;
      try {
        first = counter.start(reader);
      } catch (err) {
        ctx.note(`${counter.file}: ${(err as Error).message}; left out`);
        return;
      }
      if (counter.saturated) {
        ctx.note(`${counter.file}: saturated (${first} = 2³² − 1 words: a 32-bit counter that stopped); left out until it is reset (perfquery -R)`);
        return;
      }
      reading.counters[i] = counter;
      reading.locals[i] = sensors.length;
      sensors.push({ sensor: sensorName('ib', index, direction === 'tx' ? 'ib_tx' : 'ib_rx'), source: 'infiniband', unit: 'B/s', scope: 'ib' });
    });
    if (reading.locals[0] < 0 && reading.locals[1] < 0) continue;
    readings.push(reading);
    described.push({ ib: `ib${index}`, device: p.device, port: p.port, counters: choice.kind, linkLayer: trimmedText(path.join(p.dir, 'link_layer')), state: trimmedText(path.join(p.dir, 'state')), rate: trimmedText(path.join(p.dir, 'rate')) });
  }
  if (sensors.length === 0) {
    reader.close();
    return null;
  }
  return new InfinibandSource(readings, sensors, reader, { root, ports: described });
}

/** Every (device, port) under the class directory, in name order; null (with a note) when there is none. */
function listPorts(root: string, ctx: DetectContext): Port[] | null {
  let devices: string[];
  try {
    devices = fs.readdirSync(root).sort();
  } catch (err) {
    ctx.note(`${root}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist (no RDMA device)' : (err as Error).message}`);
    return null;
  }
  const ports: Port[] = [];
  for (const device of devices) {
    let names: string[];
    try {
      names = fs.readdirSync(path.join(root, device, 'ports'));
    } catch {
      continue;
    }
    for (const n of names.filter((x) => /^\d+$/.test(x)).map(Number).sort((a, b) => a - b)) ports.push({ device, port: n, dir: path.join(root, device, 'ports', String(n)) });
  }
  return ports;
}

/** The counters a port is read from (see the header), or why it has none. */
function chooseCounters(dir: string, reader: FileReader): CounterChoice | string {
  const readable = (...files: string[]) => files.every((f) => numberIn(reader, path.join(dir, f)) !== null);
  if (readable('counters_ext/port_xmit_data_64', 'counters_ext/port_rcv_data_64')) {
    return { kind: 'counters_ext', tx: path.join(dir, 'counters_ext/port_xmit_data_64'), rx: path.join(dir, 'counters_ext/port_rcv_data_64'), bytesPerUnit: 4, saturates: false };
  }
  const hw = readable(HW_TX, HW_RX);
  if (readable('counters/port_xmit_data', 'counters/port_rcv_data')) {
    const wide = fs.existsSync(path.join(dir, 'counters/unicast_xmit_packets'));
    if (wide || !hw) {
      return {
        kind: wide ? 'counters (64-bit)' : 'counters (32-bit or unknown width)',
        tx: path.join(dir, 'counters/port_xmit_data'),
        rx: path.join(dir, 'counters/port_rcv_data'),
        bytesPerUnit: 4,
        saturates: !wide,
      };
    }
  }
  if (hw) return { kind: 'hw_counters', tx: path.join(dir, HW_TX), rx: path.join(dir, HW_RX), bytesPerUnit: 1, saturates: false };
  const failing = ['counters/port_xmit_data', 'counters/port_rcv_data'].find((f) => numberIn(reader, path.join(dir, f)) === null) ?? 'counters/port_xmit_data';
  return `no readable data counters (${failing}: ${errorOf(path.join(dir, failing))}; no counters_ext or hw_counters/tx_bytes)`;
}

/** The number a file holds, null when it cannot be read or holds none ("N/A (no PMA)"). */
function numberIn(reader: FileReader, file: string): number | null {
  try {
    const v = reader.readNumberOnce(file);
    return Number.isFinite(v) ? v : null;
  } catch {
    return null;
  }
}

function trimmedText(file: string): string | null {
  return readTextFile(file)?.trim() ?? null;
}

function errorOf(file: string): string {
  try {
    const text = fs.readFileSync(file, 'utf8').trim();
    return JSON.stringify(text);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? (err as Error).message;
  }
}

/** Reads every port's counters each cycle and pushes their rates. */
class InfinibandSource implements Source {
  readonly name = 'infiniband';
  private readErrors = 0;
  private saturated = 0;

  constructor(
    private readonly ports: PortReading[],
    readonly sensors: readonly SensorInfo[],
    private readonly reader: FileReader,
    readonly details: Record<string, unknown>,
  ) {}

  read(t: number, sink: SampleSink): void {
    for (const p of this.ports) {
      for (let i = 0; i < 2; i++) {
        const counter = p.counters[i];
        const local = p.locals[i] as number;
        if (!counter || local < 0) continue;
        let rate: number;
        try {
          rate = counter.step(this.reader, t);
        } catch {
          this.readErrors += 1;
          continue;
        }
        if (rate === SATURATED) {
          this.saturated += 1;
          sink.drop(local, `${counter.file} saturated at 2³² − 1 words (a 32-bit InfiniBand counter stops there): its traffic from now on is unknown`);
          p.locals[i] = -1;
        } else if (rate !== NO_READING) sink.push(local, t, rate);
      }
    }
  }

  stats(): Record<string, unknown> {
    return { readErrors: this.readErrors, saturated: this.saturated };
  }

  stop(): void {
    this.reader.close();
  }
}
