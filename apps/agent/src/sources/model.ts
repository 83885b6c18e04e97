import path from 'node:path';
import type { SampleSink } from '../samples';
import { namedSensor } from '../wire';
import type { DetectContext, Source } from './types';
import { CpuStat } from './procfs';

// A labelled estimate, used only where no power sensor exists (as on the local test cluster):
// cpu0.power = idleW + (maxW − idleW) × util/100, with util from /proc/stat. Its figures carry
// source `model`, so nothing downstream can mistake them for measurements.

export function detectModel(ctx: DetectContext, utilFromProcfs?: () => number): Source | null {
  const { modelIdleW: idleW, modelMaxW: maxW, procfsRoot } = ctx.config;
  // Without the procfs source, the model reads /proc/stat itself.
  let util = utilFromProcfs;
  let own: CpuStat | undefined;
  if (!util) {
    const cpu = new CpuStat(path.join(procfsRoot, 'stat'));
    try {
      cpu.sample();
    } catch (err) {
      ctx.note(`no CPU utilisation to drive the model: ${(err as Error).message}`);
      return null;
    }
    util = () => cpu.sample();
    own = cpu;
  }
  const utilNow = util;
  return {
    name: 'model',
    sensors: [namedSensor('cpu0.power', 'model', 'W')],
    details: { method: 'model', formula: 'idleW + (maxW - idleW) * util / 100', idleW, maxW, util: 'cpu0.util from /proc/stat' },
    read(t: number, sink: SampleSink) {
      const u = utilNow();
      if (Number.isFinite(u)) sink.push(0, t, idleW + ((maxW - idleW) * u) / 100);
    },
    stop() {
      own?.close();
    },
  };
}
