import { computeRunDataMovement, computeRunEnergy, computeRunPhases, EnergyInputError, TRANSFER_RATE_BPS, type NodeTelemetry, type PhaseMarkInput, type Series } from '../src';
import { RunDataMovement, UNMARKED_PHASE } from '@erg/spec';
import { T0 } from './traces';

/** A rate sensor read every `stepMs` from `fromMs` to `toMs` (ms since T0); each reading is the mean rate over the interval before it. */
function rate(sensor: string, bps: (msSinceT0: number) => number, fromMs: number, toMs: number, stepMs: number): Series {
  const t: number[] = [];
  const v: number[] = [];
  for (let ms = fromMs; ms <= toMs + 1e-9; ms += stepMs) {
    t.push(T0 + ms);
    // The mean over (ms − step, ms] of a rate that is constant on whole milliseconds.
    let s = 0;
    for (let x = ms - stepMs; x < ms; x++) s += bps(x);
    v.push(s / stepMs);
  }
  return { sensor, t, v };
}
const node = (name: string, series: Series[], source = 'nvml'): NodeTelemetry => ({ node: name, series, sensors: series.map((s) => ({ sensor: s.sensor, source })) });
const win = (fromMs: number, toMs: number) => ({ startMs: T0 + fromMs, endMs: T0 + toMs });
const constant = (x: number) => () => x;
const mark = (kind: PhaseMarkInput['kind'], name: string, ms: number, on = 'n1'): PhaseMarkInput => ({ node: on, kind, name, t: T0 + ms });

describe('computeRunDataMovement', () => {
  test('known rates give known bytes per link and direction, J per GB per kind of link', () => {
    const n1 = node('n1', [
      rate('gpu0.pcie_tx', constant(2e9), -1000, 11_000, 100),
      rate('gpu0.pcie_rx', constant(1e9), -1000, 11_000, 100),
      // 1 GB/s for the first 5 s, 3 GB/s after: 5 + 15 GB.
      rate('gpu0.nvlink_tx', (ms) => (ms < 5000 ? 1e9 : 3e9), -1000, 11_000, 100),
      rate('gpu1.c2c_rx', constant(4e8), -1000, 11_000, 250),
    ]);
    const n2 = node('n2', [rate('gpu0.pcie_tx', constant(5e8), -1000, 11_000, 1000), rate('memory0.mem_traffic', constant(2e10), -1000, 11_000, 500)], 'resctrl');
    const r = computeRunDataMovement({ window: win(0, 10_000), nodes: [n1, n2], energyJ: 30_000 })!;
    expect(RunDataMovement.parse(r)).toEqual(r);
    const link = (nodeName: string, device: string, kind: string) => r.links.find((l) => l.node === nodeName && l.device === device && l.kind === kind)!;
    expect(link('n1', 'gpu0', 'pcie').byDirection.tx).toBeCloseTo(20e9, 0);
    expect(link('n1', 'gpu0', 'pcie').byDirection.rx).toBeCloseTo(10e9, 0);
    expect(link('n1', 'gpu0', 'pcie')).toMatchObject({ sensors: ['gpu0.pcie_rx', 'gpu0.pcie_tx'], sources: ['nvml'], coverage: 1 });
    expect(link('n1', 'gpu0', 'nvlink').bytes).toBeCloseTo(20e9, 0);
    expect(link('n1', 'gpu1', 'c2c').byDirection).toEqual({ rx: expect.closeTo(4e9, 0) });
    expect(link('n2', 'memory0', 'memory').byDirection).toEqual({ total: expect.closeTo(200e9, 0) });
    const kind = (k: string) => r.kinds.find((x) => x.kind === k)!;
    expect(r.kinds.map((k) => k.kind)).toEqual(['pcie', 'nvlink', 'c2c', 'memory']);
    expect(kind('pcie').bytes).toBeCloseTo(35e9, 0); // 20 + 10 on n1, 5 on n2
    expect(kind('pcie').byDirection).toEqual({ tx: expect.closeTo(25e9, 0), rx: expect.closeTo(10e9, 0) });
    expect(kind('pcie').links).toBe(2);
    expect(kind('pcie').meanRateBps).toBeCloseTo(3.5e9, 0);
    expect(kind('pcie').joulesPerGB).toBeCloseTo(30_000 / 35, 9);
    expect(kind('memory').joulesPerGB).toBeCloseTo(30_000 / 200, 9);
    expect(r.overlap).toBeNull(); // no gpuN.util anywhere
    expect(r.phases).toBeNull();
    expect(r.warnings).toEqual([]);
  });

  test('window edges inside a reading interval take the part of its rate that lies inside', () => {
    // Readings every second, 1 GB/s over the first second, 2 GB/s after; the window starts 0.25 s
    // after one reading and ends 0.5 s after another: 0.75 × 1 + 3 × 2 + 0.5 × 2 GB.
    const r = computeRunDataMovement({ window: win(250, 4500), nodes: [node('n1', [rate('gpu0.pcie_tx', (ms) => (ms < 1000 ? 1e9 : 2e9), 0, 6000, 1000)])], energyJ: 1 })!;
    expect(r.links[0]!.bytes).toBeCloseTo(7.75e9, 0);
  });

  test('a rate series is a step function: a reading holds over the interval before it, not a trapezoid', () => {
    // 0 B/s, then one reading of 10 GB/s at 2 s (the mean over 1–2 s), then 0 again: exactly 10 GB
    // by 2 s (a trapezoid would put half of it after 2 s).
    const s: Series = { sensor: 'gpu0.nvlink_rx', t: [0, 1000, 2000, 3000, 4000].map((x) => T0 + x), v: [0, 0, 10e9, 0, 0] };
    const r = computeRunDataMovement({ window: win(0, 2000), nodes: [node('n1', [s])], energyJ: 100 })!;
    expect(r.links[0]!.bytes).toBe(10e9);
    expect(r.kinds[0]!.joulesPerGB).toBeCloseTo(10, 12);
  });

  test('host memory: reads + writes where they are measured; a total beside them is not added twice', () => {
    const n1 = node('n1', [
      rate('memory0.mem_read', constant(3e9), -1000, 3000, 100),
      rate('memory0.mem_write', constant(1e9), -1000, 3000, 100),
      rate('memory0.mem_traffic', constant(4e9), -1000, 3000, 100),
    ]);
    const r = computeRunDataMovement({ window: win(0, 2000), nodes: [n1], energyJ: 80 })!;
    expect(r.links).toHaveLength(1);
    expect(r.links[0]).toMatchObject({ device: 'memory0', kind: 'memory', byDirection: { read: expect.closeTo(6e9, 0), write: expect.closeTo(2e9, 0) } });
    expect(r.links[0]!.bytes).toBeCloseTo(8e9, 0);
    expect(r.warnings).toEqual(['n1: memory0.mem_traffic not added: its reads and writes are measured (it would count them twice)']);
  });

  test('overlap: the share of GPU-busy time during which its links moved more than the threshold, on a synthetic trace', () => {
    // Busy (90 %) 0–6 s, idle (2 %) 6–10 s; PCIe at 2 GB/s from 3 to 8 s, 1 MB/s otherwise; NVLink
    // idle. Busy 6 s, of which 3–6 s overlap: 3 s, 0.5. GPU 1 is busy throughout and never transfers.
    const util0 = rate('gpu0.util', (ms) => (ms < 6000 ? 90 : 2), -500, 10_500, 100);
    const pcie0 = rate('gpu0.pcie_rx', (ms) => (ms >= 3000 && ms < 8000 ? 2e9 : 1e6), -500, 10_500, 100);
    const nvl0 = rate('gpu0.nvlink_tx', constant(0), -500, 10_500, 50);
    const util1 = rate('gpu1.util', constant(100), -500, 10_500, 100);
    const pcie1 = rate('gpu1.pcie_tx', constant(1e6), -500, 10_500, 100);
    const r = computeRunDataMovement({ window: win(0, 10_000), nodes: [node('n1', [util0, pcie0, nvl0, util1, pcie1])], energyJ: 1000 })!;
    expect(r.overlap).toMatchObject({ utilThresholdPct: 10, rateThresholdBps: TRANSFER_RATE_BPS });
    const gpu = (g: string) => r.overlap!.gpus.find((x) => x.gpu === g)!;
    expect(gpu('gpu0').busyS).toBeCloseTo(6, 9);
    expect(gpu('gpu0').overlappedS).toBeCloseTo(3, 9);
    expect(gpu('gpu0').fraction).toBeCloseTo(0.5, 9);
    expect(gpu('gpu1')).toMatchObject({ busyS: expect.closeTo(10, 9), overlappedS: 0, fraction: 0 });
    expect(r.overlap!.busyS).toBeCloseTo(16, 9);
    expect(r.overlap!.fraction).toBeCloseTo(3 / 16, 9);
    // The thresholds are parameters: at 1 kB/s every busy moment of GPU 1 overlaps too.
    const low = computeRunDataMovement({ window: win(0, 10_000), nodes: [node('n1', [util0, pcie0, nvl0, util1, pcie1])], energyJ: 1000, transferRateBps: 1e3 })!;
    expect(low.overlap!.gpus.find((g) => g.gpu === 'gpu1')!.fraction).toBeCloseTo(1, 9);
    expect(low.overlap!.gpus.find((g) => g.gpu === 'gpu0')!.overlappedS).toBeCloseTo(6, 9);
  });

  test('per phase: bytes per phase beside energy per phase; self bytes and unmarked add up to the run\'s', () => {
    // load 0–4 s moves 5 GB/s over PCIe, train 4–9 s 1 GB/s, 9–10 s unmarked 0.5 GB/s; a step
    // phase nested in train 5–6 s. The energy counter: 100 W throughout.
    const pcieRate = (ms: number) => (ms < 4000 ? 5e9 : ms < 9000 ? 1e9 : 5e8);
    const pcie = rate('gpu0.pcie_rx', pcieRate, -500, 10_500, 100);
    const energy: Series = { sensor: 'gpu0.energy', t: [], v: [] };
    for (let ms = -500; ms <= 10_500; ms += 100) {
      (energy.t as number[]).push(T0 + ms);
      (energy.v as number[]).push(1000 + (100 * (ms + 500)) / 1000);
    }
    const nodes = [node('n1', [pcie, energy])];
    const marks = [mark('begin', 'load', 0), mark('end', 'load', 4000), mark('begin', 'train', 4000), mark('begin', 'opt', 5000), mark('end', 'opt', 6000), mark('end', 'train', 9000)];
    const window = win(0, 10_000);
    const runEnergy = computeRunEnergy({ window, nodes });
    const phases = computeRunPhases({ window, nodes, marks });
    const r = computeRunDataMovement({ window, nodes, energyJ: runEnergy.energyJ, marks, phases })!;
    expect(RunDataMovement.parse(r)).toEqual(r);
    const p = (name: string) => r.phases!.find((x) => x.name === name)!;
    expect(r.phases!.map((x) => x.name)).toEqual(['load', 'train', 'opt', UNMARKED_PHASE]);
    expect(p('load').kinds.pcie!.bytes).toBeCloseTo(20e9, 0);
    expect(p('train').kinds.pcie!.bytes).toBeCloseTo(5e9, 0); // inclusive: opt's second counted
    expect(p('train').selfBytes.pcie).toBeCloseTo(4e9, 0);
    expect(p('opt').kinds.pcie!.byDirection).toEqual({ rx: expect.closeTo(1e9, 0) });
    expect(p(UNMARKED_PHASE).kinds.pcie!.bytes).toBeCloseTo(0.5e9, 0);
    expect(p('train').timeS).toBeCloseTo(5, 12);
    const selfTotal = r.phases!.reduce((s, x) => s + (x.selfBytes.pcie ?? 0), 0);
    expect(selfTotal).toBeCloseTo(r.kinds[0]!.bytes, 0);
    // Energy beside the bytes: 100 W × 4 s for load.
    expect(p('load').energyJ).toBeCloseTo(400, 6);
    expect(p('load').joulesPerGB.pcie).toBeCloseTo(400 / 20, 6);
    expect(p(UNMARKED_PHASE).energyJ).toBeCloseTo(100, 6);
    // Without energy per phase the bytes still come, the energy is null.
    const bare = computeRunDataMovement({ window, nodes, energyJ: runEnergy.energyJ, marks })!;
    expect(bare.phases!.find((x) => x.name === 'load')).toMatchObject({ energyJ: null, joulesPerGB: { pcie: null } });
  });

  test('null where no node has a data-movement sensor; a declared sensor without samples is a link of 0 bytes with a warning', () => {
    const power: Series = { sensor: 'gpu0.power', t: [T0, T0 + 1000], v: [100, 100] };
    const util: Series = { sensor: 'gpu0.util', t: [T0, T0 + 1000], v: [50, 50] };
    expect(computeRunDataMovement({ window: win(0, 1000), nodes: [node('n1', [power, util])], energyJ: 100 })).toBeNull();
    expect(computeRunDataMovement({ window: win(0, 1000), nodes: [], energyJ: 0 })).toBeNull();
    const declared: NodeTelemetry = { node: 'n1', series: [power], sensors: [{ sensor: 'gpu0.power', source: 'nvml' }, { sensor: 'gpu0.c2c_tx', source: 'nvml', scope: 'gpu' }] };
    const r = computeRunDataMovement({ window: win(0, 1000), nodes: [declared, declared], energyJ: 100 })!;
    expect(r.links).toEqual([{ node: 'n1', device: 'gpu0', kind: 'c2c', bytes: 0, byDirection: { tx: 0 }, sensors: ['gpu0.c2c_tx'], sources: ['nvml'], coverage: 0 }]);
    expect(r.kinds[0]).toMatchObject({ kind: 'c2c', bytes: 0, joulesPerGB: null });
    expect(r.warnings).toEqual(['n1: listed more than once; counted once (the first entry)', 'n1: gpu0.c2c_tx has no samples in the window; its bytes are unknown (counted as 0)']);
  });

  test('data-movement sensors leave a run\'s energy, method, coverage and warnings as they were (even those of a GPU without a power reading)', () => {
    const power: Series = { sensor: 'gpu0.power', t: [T0, T0 + 500, T0 + 1000], v: [100, 100, 100] };
    const links = [rate('gpu0.pcie_tx', constant(1e9), 0, 1000, 100), rate('gpu1.nvlink_rx', constant(1e9), 0, 1000, 100), rate('memory0.mem_traffic', constant(1e9), 0, 1000, 100)];
    const without = computeRunEnergy({ window: win(0, 1000), nodes: [node('n1', [power])] });
    const withLinks = computeRunEnergy({ window: win(0, 1000), nodes: [node('n1', [power, ...links])] });
    expect(withLinks).toEqual(without);
  });

  test('inter-node links count what the nodes sent, summed over nodes: a byte between two nodes counts once, received bytes shown beside', () => {
    // n1 sends 1 GB/s to n2 over InfiniBand for 10 s (n1 tx = n2 rx); n2 also reads 0.2 GB/s from
    // storage over its network interface (rx only) and sends 0.1 GB/s to it.
    const n1 = node('n1', [rate('ib0.ib_tx', constant(1e9), -1000, 11_000, 500), rate('ib0.ib_rx', constant(0), -1000, 11_000, 500)], 'infiniband');
    const n2 = node('n2', [
      rate('ib0.ib_tx', constant(0), -1000, 11_000, 500),
      rate('ib0.ib_rx', constant(1e9), -1000, 11_000, 500),
      rate('nic0.net_tx', constant(1e8), -1000, 11_000, 1000),
      rate('nic0.net_rx', constant(2e8), -1000, 11_000, 1000),
    ], 'net');
    const r = computeRunDataMovement({ window: win(0, 10_000), nodes: [n1, n2], energyJ: 5000 })!;
    expect(RunDataMovement.parse(r)).toEqual(r);
    expect(r.kinds.map((k) => k.kind)).toEqual(['infiniband', 'network']);
    const ib = r.kinds[0]!;
    expect(ib.bytes).toBeCloseTo(10e9, 0); // not 20e9: n2's rx is n1's tx
    expect(ib.byDirection).toEqual({ tx: expect.closeTo(10e9, 0), rx: expect.closeTo(10e9, 0) });
    expect(ib.joulesPerGB).toBeCloseTo(5000 / 10, 9);
    expect(ib.links).toBe(2);
    const nic = r.links.find((l) => l.node === 'n2' && l.device === 'nic0')!;
    expect(nic).toMatchObject({ kind: 'network', bytes: expect.closeTo(1e9, 0), byDirection: { tx: expect.closeTo(1e9, 0), rx: expect.closeTo(2e9, 0) }, sources: ['net'] });
    expect(r.overlap).toBeNull(); // network devices are no GPUs
    expect(r.warnings).toEqual([]);
    // Per phase the same definition: inclusive and self bytes of a phase count sent bytes.
    const marks = [mark('begin', 'exchange', 0, 'n1'), mark('end', 'exchange', 5000, 'n1'), mark('begin', 'exchange', 0, 'n2'), mark('end', 'exchange', 5000, 'n2')];
    const phased = computeRunDataMovement({ window: win(0, 10_000), nodes: [n1, n2], energyJ: 5000, marks })!;
    const exchange = phased.phases!.find((p) => p.name === 'exchange')!;
    expect(exchange.kinds.infiniband!.bytes).toBeCloseTo(5e9, 0);
    expect(exchange.kinds.infiniband!.byDirection).toEqual({ tx: expect.closeTo(5e9, 0), rx: expect.closeTo(5e9, 0) });
    expect(exchange.selfBytes.infiniband).toBeCloseTo(5e9, 0);
    expect(exchange.selfBytes.network).toBeCloseTo(0.5e9, 0);
  });

  test('a link sensor that stops early (the agent dropped a saturated counter) is warned about: its bytes are a lower bound', () => {
    const r = computeRunDataMovement({ window: win(0, 10_000), nodes: [node('n1', [rate('ib0.ib_tx', constant(1e9), -1000, 4000, 500), rate('ib0.ib_rx', constant(1e9), -1000, 11_000, 500)], 'infiniband')], energyJ: 100 })!;
    expect(r.kinds[0]!.coverage).toBeCloseTo(0.4, 2);
    expect(r.kinds[0]!.bytes).toBeCloseTo(4e9, 0);
    expect(r.warnings).toEqual(['n1: ib0.ib_tx covers 40 % of the window: its bytes are a lower bound (gaps, or a sensor the agent dropped, such as a saturated counter)']);
  });

  test('a network link that measures only what it received counts 0 bytes, and says why', () => {
    const r = computeRunDataMovement({ window: win(0, 10_000), nodes: [node('n1', [rate('nic0.net_rx', constant(1e9), -1000, 11_000, 1000)], 'net')], energyJ: 100 })!;
    expect(r.kinds[0]).toMatchObject({ kind: 'network', bytes: 0, byDirection: { rx: expect.closeTo(10e9, 0) }, joulesPerGB: null });
    expect(r.warnings).toEqual(['n1: nic0 (network) measures no tx direction: its bytes count 0 (network counts what nodes sent)']);
  });

  test('a superchip GPU without a C2C sensor: a warning says why it is usually absent (driver / DCGM floor)', () => {
    // GH200-like: module0 (the counter) and gpu0/gpu1 with PCIe; only gpu1 has C2C.
    const n1 = node('n1', [
      { sensor: 'module0.energy', t: [T0, T0 + 10_000], v: [0, 4500] },
      { sensor: 'module1.energy', t: [T0, T0 + 10_000], v: [0, 4500] },
      rate('gpu0.pcie_tx', constant(1e9), 0, 10_000, 100),
      rate('gpu1.pcie_tx', constant(1e9), 0, 10_000, 100),
      rate('gpu1.c2c_tx', constant(1e9), 0, 10_000, 100),
    ]);
    const r = computeRunDataMovement({ window: win(0, 10_000), nodes: [n1], energyJ: 9000 })!;
    expect(r.warnings).toEqual(['n1: gpu0 is a superchip\'s GPU but has no C2C sensor (needs driver ≥ 575 / DCGM ≥ 4.1); its CPU–GPU traffic is not counted — the agent\'s notes (n1.meta.json) say why']);
    // A discrete node (no module sensors) is not told anything about C2C.
    const discrete = computeRunDataMovement({ window: win(0, 10_000), nodes: [node('n2', [rate('gpu0.pcie_tx', constant(1e9), 0, 10_000, 100)])], energyJ: 9000 })!;
    expect(discrete.warnings).toEqual([]);
  });

  test('refuses an empty window', () => {
    expect(() => computeRunDataMovement({ window: win(5, 5), nodes: [], energyJ: 0 })).toThrow(EnergyInputError);
  });
});
