import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { normalizeBatch, TelemetryBatch } from '@erg/spec';
import { waitFor } from '@erg/testkit';
import { nowMs } from '../src/clock';
import { createLogger } from '../src/log';
import { SampleStore, sinkFor } from '../src/samples';
import { detectSources } from '../src/sources';
import { detectNvidiaSmi } from '../src/sources/nvidia-smi';
import { QUANTITY_UNITS, type TelemetryBatch as AgentBatch } from '../src/wire';
import { cleanupTempDirs, configFrom, copyFixtures, detectContext, FIXTURES, tempDir } from './helpers';

// Contract: what the agent produces from every (fixture) source is accepted by packages/spec's
// TelemetryBatch schema and normalizeBatch — the authority the API validates with.

afterAll(cleanupTempDirs);

function checkAccepted(line: string): AgentBatch {
  const parsed = JSON.parse(line) as unknown;
  const envelope = TelemetryBatch.safeParse(parsed);
  if (!envelope.success) throw new Error(JSON.stringify(envelope.error.issues));
  const now = Date.now();
  const normalized = normalizeBatch(envelope.data, { minT: now - 60_000, maxT: now + 60_000 });
  if (!normalized.ok) throw new Error(JSON.stringify(normalized.issues));
  return parsed as AgentBatch;
}

describe('agent batches against packages/spec', () => {
  test('hwmon, RAPL, procfs, model and NVML (fake) sensors: names, units and values are accepted', async () => {
    const lib = path.join(tempDir(), 'libfake-nvml.so');
    execFileSync('gcc', ['-shared', '-fPIC', '-o', lib, path.join(FIXTURES, 'fake-nvml', 'fake_nvml.c')]);
    const config = configFrom({
      'sysfs-root': copyFixtures('gh200', 'x86-rapl'), 'procfs-root': '/proc', 'nvml-lib': lib, sources: 'hwmon,rapl,nvml,procfs,model', node: 'gh-001',
    });
    const d = detectSources(config, createLogger('silent'), () => {});
    expect(d.active.map((a) => a.source.name)).toEqual(['hwmon', 'rapl', 'nvml', 'procfs', 'model']);
    for (let i = 0; i < 3; i += 1) {
      const t = nowMs();
      for (const { source, sink } of d.active) source.read(t, sink);
      await new Promise((r) => setTimeout(r, 30));
    }
    const batch = checkAccepted(d.store.takeBatch('gh-001', 0, true) as string);
    for (const s of batch.sensors ?? []) expect(s.unit).toBe(QUANTITY_UNITS[s.sensor.split('.')[1] as keyof typeof QUANTITY_UNITS]);
    expect(batch.samples.length).toBeGreaterThanOrEqual(18);
    await Promise.all(d.active.map((a) => a.source.stop()));
  });

  test('nvidia-smi (fake) sensors are accepted', async () => {
    const source = detectNvidiaSmi(detectContext({ 'nvidia-smi': path.join(FIXTURES, 'nvidia-smi', 'nvidia-smi'), 'interval-ms': 20 }));
    const store = new SampleStore();
    const sink = sinkFor(store, source?.sensors.map((s) => store.register(s)) ?? [], () => {});
    await waitFor(
      () => {
        source?.read(nowMs(), sink);
        return store.pendingSamples >= 9;
      },
      { intervalMs: 20, timeoutMs: 10_000, what: 'a loop of the fake nvidia-smi' },
    );
    checkAccepted(store.takeBatch('gh-001', 3, true) as string);
    await source?.stop();
  });
});
