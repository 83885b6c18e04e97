import {
  axisNumber, kindLabel, movementKinds, movementRows, movementScatter, NO_VALUE, overlapText, runKindRows, runPhaseMovement, shownKind, UNMARKED,
} from '@erg/web';
import { campaignMovement, results, runMovement } from './fixtures';

const withMovement = () => ({ ...results(), dataMovement: campaignMovement() });

describe('the kinds of link a campaign offers', () => {
  it('are exactly those some configuration measured, in the API order, named as in the CLI', () => {
    expect(movementKinds(campaignMovement())).toEqual(['pcie', 'nvlink', 'c2c']);
    expect(movementKinds({ configurations: [campaignMovement().configurations[0]!] })).toEqual(['pcie']);
    expect(movementKinds(null)).toEqual([]);
    expect(['pcie', 'nvlink', 'c2c', 'memory', 'infiniband', 'network'].map(kindLabel)).toEqual(['PCIe', 'NVLink', 'NVLink-C2C', 'host memory', 'InfiniBand', 'network']);
  });

  it('include inter-node traffic (network, InfiniBand) after the links inside a node, and plot it against energy like any other kind', () => {
    const movement = campaignMovement();
    const net = (bytes: number) => ({ kind: 'network' as const, bytes: { ...movement.configurations[0]!.kinds[0]!.bytes, mean: bytes }, meanRateBps: movement.configurations[0]!.kinds[0]!.meanRateBps, joulesPerGB: movement.configurations[0]!.kinds[0]!.joulesPerGB });
    movement.configurations[1]!.kinds.push(net(2e9));
    movement.configurations[2]!.kinds.unshift(net(8e9));
    expect(movementKinds(movement)).toEqual(['pcie', 'nvlink', 'c2c', 'network']);
    const L = movementScatter({ ...results(), dataMovement: movement }, 'network', 640, 380);
    expect(L.points.map((p) => [p.key, p.bytes])).toEqual([['n=1;w=1', 2e9], ['n=2;w=1', 8e9]]);
    expect(L.xLabel).toBe('mean bytes per run over network (GB)');
  });

  it('keep the chosen kind while it is offered, else show the first', () => {
    expect(shownKind(['pcie', 'c2c'], 'c2c')).toBe('c2c');
    expect(shownKind(['pcie', 'c2c'], 'memory')).toBe('pcie');
    expect(shownKind(['pcie', 'c2c'], null)).toBe('pcie');
    expect(shownKind([], 'pcie')).toBeNull();
  });
});

describe('bytes against energy', () => {
  const L = movementScatter(withMovement(), 'pcie', 640, 380);
  const at = (key: string) => L.points.find((p) => p.key === key)!;

  it('places one point per configuration that measured the kind, in the results order, GB on x and kJ on y', () => {
    expect(L.points.map((p) => p.key)).toEqual(['n=1;w=1', 'n=1;w=2', 'n=2;w=1']);
    expect(at('n=1;w=1')).toMatchObject({ xValue: 20, yValue: 0.5, bytes: 20e9, energyJ: 500 });
    // More bytes further right; more energy higher (SVG y grows downwards).
    expect(at('n=1;w=2').x).toBeLessThan(at('n=2;w=1').x);
    expect(at('n=2;w=1').x).toBeLessThan(at('n=1;w=1').x);
    expect(at('n=2;w=1').y).toBeLessThan(at('n=1;w=1').y);
    expect(at('n=1;w=1').y).toBeLessThan(at('n=1;w=2').y);
    expect(L.xLabel).toBe('mean bytes per run over PCIe (GB)');
    expect(L.yLabel).toBe('mean energy per run (kJ)');
  });

  it('draws the 95 % intervals as whiskers both ways', () => {
    const a = at('n=1;w=1');
    expect(a.xBar[0]).toBeLessThan(a.x);
    expect(a.xBar[1]).toBeGreaterThan(a.x);
    expect(a.x - a.xBar[0]).toBeCloseTo(a.xBar[1] - a.x, 6);
    expect(a.yBar[0]).toBeLessThan(a.y);
    expect(a.yBar[1]).toBeGreaterThan(a.y);
  });

  it('never puts an axis below 0: a bytes interval reaching below 0 is cut at the axis and flagged', () => {
    // n=1;w=2: 5 GB ± 8 GB over two runs.
    const b = at('n=1;w=2');
    expect(b).toMatchObject({ xClipped: true, yClipped: false });
    expect(b.xBar[0]).toBeCloseTo(L.plot.left, 6);
    expect(L.xDomain[0]).toBe(0);
    expect(L.yDomain[0]).toBeGreaterThanOrEqual(0);
    for (const t of [...L.xTicks, ...L.yTicks]) expect(t.value).toBeGreaterThanOrEqual(0);
    expect(L.points.filter((p) => p.xClipped || p.yClipped).map((p) => p.key)).toEqual(['n=1;w=2']);
  });

  it('labels the runtime- and energy-optimal configurations', () => {
    expect(Object.fromEntries(L.points.map((p) => [p.key, p.label]))).toEqual({ 'n=1;w=1': 'fastest', 'n=1;w=2': 'least energy', 'n=2;w=1': null });
    const both = { ...withMovement(), best: { time: 'n=2;w=1', energy: 'n=2;w=1', edp: 'n=2;w=1', carbon: null, cost: null } };
    expect(movementScatter(both, 'pcie').points.find((p) => p.label)).toMatchObject({ key: 'n=2;w=1', label: 'fastest · least energy' });
  });

  it('moves the points when another kind is shown: only the configurations that measured it', () => {
    const c2c = movementScatter(withMovement(), 'c2c');
    expect(c2c.points.map((p) => [p.key, p.xValue])).toEqual([['n=1;w=1', 40]]);
    expect(movementScatter(withMovement(), 'nvlink').points.map((p) => p.key)).toEqual(['n=2;w=1']);
    expect(movementScatter(withMovement(), 'memory').points).toEqual([]);
    expect(c2c.xLabel).toContain('NVLink-C2C');
  });

  it('writes ticks as numbers in the unit of the axis title', () => {
    expect([0, 0.5, 12, 1500, 0.1 + 0.2].map(axisNumber)).toEqual(['0', '0.5', '12', '1,500', '0.3']);
  });
});

describe('the data-movement table', () => {
  it('has per configuration, in the results order, bytes per run (± 95 %) and J per GB of every kind, and the overlap', () => {
    const rows = movementRows(withMovement(), ['pcie', 'nvlink', 'c2c']);
    expect(rows.map((r) => r.key)).toEqual(['n=1;w=1', 'n=1;w=2', 'n=2;w=1']);
    expect(rows[0]).toEqual({
      key: 'n=1;w=1', n: 3, overlap: '90.0 %',
      kinds: { pcie: { bytes: '20.0 GB ± 1.00 GB', joulesPerGB: '25.0 J/GB' }, nvlink: { bytes: NO_VALUE, joulesPerGB: NO_VALUE }, c2c: { bytes: '40.0 GB ± 2.00 GB', joulesPerGB: '12.5 J/GB' } },
    });
    // No overlap figure: no GPU had both a utilisation and a link sensor.
    expect(rows[2]!.overlap).toBe(NO_VALUE);
    // One run measured NVLink: no interval to speak of.
    expect(rows[2]!.kinds.nvlink).toEqual({ bytes: '1.00 GB', joulesPerGB: '600 J/GB' });
  });
});

describe("a run's data movement", () => {
  it('has per kind its bytes, mean rate and J per GB', () => {
    expect(runKindRows(runMovement())).toEqual([
      { kind: 'pcie', label: 'PCIe', bytes: '20.0 GB', rate: '2.00 GB/s', joulesPerGB: '150 J/GB', links: 1, coverage: '100.0 %' },
      { kind: 'c2c', label: 'NVLink-C2C', bytes: '40.0 GB', rate: '4.00 GB/s', joulesPerGB: '75.0 J/GB', links: 1, coverage: '98.0 %' },
    ]);
  });

  it('says how much GPU busy time overlapped with transfers, or why it cannot', () => {
    expect(overlapText(runMovement().overlap)).toBe(
      "Transfer overlap: 80.0 % of 10.0 s GPU-busy time moved data over the GPUs' links (8.00 s; busy: utilisation above 10.0 %; transferring: its links together above 1.00 MB/s).",
    );
    expect(overlapText(null)).toContain('not known');
    expect(overlapText({ ...runMovement().overlap!, fraction: null, busyS: 0, overlappedS: 0 })).toContain('no GPU was busy');
  });

  it('puts bytes per phase beside the phase energy, a dash where a phase moved nothing over a kind', () => {
    const p = runPhaseMovement(runMovement())!;
    expect(p.kinds).toEqual(['pcie', 'c2c']);
    expect(p.rows.map((r) => r.name)).toEqual(['train', UNMARKED]);
    expect(p.rows[0]).toEqual({ name: 'train', time: '8.00 s', energy: '2.60 kJ', kinds: { pcie: { bytes: '18.0 GB', joulesPerGB: '144 J/GB' }, c2c: { bytes: NO_VALUE, joulesPerGB: NO_VALUE } } });
    expect(runPhaseMovement(runMovement({ phases: null }))).toBeNull();
  });
});
