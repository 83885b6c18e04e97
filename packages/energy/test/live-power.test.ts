import { livePower, type PowerReading } from '../src';

const r = (node: string, sensor: string, w: number, t = 1000): PowerReading => ({ node, sensor, w, t });

describe('livePower', () => {
  it('sums GPUs, CPUs and memory of a node without modules, and adds nodes together', () => {
    const p = livePower([r('a', 'gpu0.power', 300), r('a', 'gpu1.power', 310, 1500), r('a', 'cpu0.power', 90), r('a', 'memory0.power', 20), r('b', 'gpu0.power', 200, 1200)]);
    expect(p).toEqual({ w: 920, t: 1500 });
  });

  it('counts only the modules of a node that has them (a module covers its GPU, Grace and memory)', () => {
    const p = livePower([r('gh', 'module0.power', 600), r('gh', 'gpu0.power', 400), r('gh', 'grace0.power', 150), r('gh', 'memory0.power', 30)]);
    expect(p).toEqual({ w: 600, t: 1000 });
  });

  it('uses Grace for a CPU index without a CPU reading, and then leaves memory out', () => {
    expect(livePower([r('n', 'gpu0.power', 400), r('n', 'grace0.power', 150), r('n', 'memory0.power', 30)])).toEqual({ w: 550, t: 1000 });
    expect(livePower([r('n', 'cpu0.power', 100), r('n', 'grace0.power', 150), r('n', 'memory0.power', 30)])).toEqual({ w: 130, t: 1000 });
  });

  it('never adds node or SysIO meters, nor non-power sensors', () => {
    expect(livePower([r('n', 'node0.power', 900), r('n', 'sysio0.power', 20), r('n', 'gpu0.util', 99)])).toBeNull();
    expect(livePower([r('n', 'node0.power', 900), r('n', 'gpu0.power', 250)])).toEqual({ w: 250, t: 1000 });
  });

  it('keeps the newest reading when a sensor appears twice', () => {
    expect(livePower([r('n', 'gpu0.power', 100, 1000), r('n', 'gpu0.power', 180, 2000)])).toEqual({ w: 180, t: 2000 });
  });

  it('is null without readings', () => {
    expect(livePower([])).toBeNull();
  });
});
