import type { AgentConfig } from '../config';
import type { Logger } from '../log';
import { SampleStore, sinkFor, type SampleSink } from '../samples';
import type { SourceName } from '../wire';
import { detectDcgm } from './dcgm';
import { detectGracePmu } from './grace-pmu';
import { detectHwmon } from './hwmon';
import { detectInfiniband } from './infiniband';
import { detectModel } from './model';
import { detectNet } from './net';
import { detectNvidiaSmi } from './nvidia-smi';
import { detectNvml } from './nvml';
import { detectProcfs } from './procfs';
import { detectRapl } from './rapl';
import { detectResctrl } from './resctrl';
import type { DetectContext, Source } from './types';

export type { Source, DetectContext } from './types';

export interface ActiveSource {
  source: Source;
  sink: SampleSink;
}

export interface Detection {
  /** In read order (the model reads after procfs, whose utilisation it uses). */
  active: ActiveSource[];
  /** Why each source that was tried is absent, or what it left out. */
  notes: Partial<Record<SourceName, string[]>>;
  /** Sensors a later source also offered under a name an earlier one already had; the earlier one is kept. */
  shadowed: { sensor: string; source: SourceName; keptFrom: SourceName }[];
  store: SampleStore;
}

/**
 * Finds this node's sensors. With `sources: 'auto'`: hwmon, rapl, resctrl, perf (Grace's SCF PMU),
 * dcgm, nvml, nvidia-smi (only when NVML is absent), infiniband, net, procfs, and the power model only when no
 * power or energy sensor exists. With an explicit list: those sources (nvidia-smi still only when nvml is absent or not
 * listed; model whenever listed). Sensor names are registered first come, first served, in
 * this order, so hwmon's module meter is kept over NVML's module-scope field where both exist;
 * each source is told the names already offered (`taken`), so NVML leaves the link traffic DCGM
 * reports to DCGM rather than read it only to be shadowed.
 */
export function detectSources(config: AgentConfig, log: Logger, onDrop: (sensor: string, reason: string) => void): Detection {
  const wanted = (name: SourceName) => config.sources === 'auto' || config.sources.includes(name);
  const notes: Partial<Record<SourceName, string[]>> = {};
  const found: Source[] = [];
  const ctx = (name: SourceName): DetectContext => ({
    config,
    log,
    note: (message) => (notes[name] ??= []).push(message),
    taken: new Set(found.flatMap((s) => s.sensors.map((x) => x.sensor))),
  });
  const tryDetect = <S extends Source>(name: SourceName, detect: (c: DetectContext) => S | null): S | null => {
    if (!wanted(name)) return null;
    try {
      const s = detect(ctx(name));
      if (s) found.push(s);
      return s;
    } catch (err) {
      ctx(name).note(`detection failed: ${(err as Error).message}`);
      return null;
    }
  };
  tryDetect('hwmon', detectHwmon);
  tryDetect('rapl', detectRapl);
  tryDetect('resctrl', detectResctrl);
  tryDetect('perf', detectGracePmu);
  tryDetect('dcgm', detectDcgm);
  const nvml = tryDetect('nvml', detectNvml);
  if (!nvml) tryDetect('nvidia-smi', detectNvidiaSmi);
  else if (config.sources !== 'auto' && config.sources.includes('nvidia-smi')) ctx('nvidia-smi').note('not used: NVML is available');
  tryDetect('infiniband', detectInfiniband);
  tryDetect('net', detectNet);
  const procfs = tryDetect('procfs', detectProcfs);
  const hasPower = found.some((s) => s.sensors.some((x) => x.unit === 'W' || x.unit === 'J'));
  if (config.sources === 'auto' && hasPower) ctx('model').note('not used: real power/energy sensors exist');
  else tryDetect('model', (c) => detectModel(c, procfs ? () => procfs.lastUtil() : undefined));

  const store = new SampleStore();
  const shadowed: Detection['shadowed'] = [];
  const active: ActiveSource[] = [];
  for (const source of found) {
    const ids = source.sensors.map((info) => {
      const id = store.register(info);
      if (id < 0) {
        const keptFrom = found.slice(0, found.indexOf(source)).find((s) => s.sensors.some((x) => x.sensor === info.sensor))?.name ?? source.name;
        shadowed.push({ sensor: info.sensor, source: source.name, keptFrom });
      }
      return id;
    });
    active.push({ source, sink: sinkFor(store, ids, onDrop) });
  }
  return { active, notes, shadowed, store };
}
