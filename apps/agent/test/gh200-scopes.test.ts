import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { computeRunEnergy, type NodeTelemetry } from '@erg/energy';
import { createLogger } from '../src/log';
import { detectSources } from '../src/sources';
import type { TelemetryBatch } from '../src/wire';
import { cleanupTempDirs, configFrom, copyFixtures, FIXTURES, rewrite, tempDir } from './helpers';

// gcc builds the fake NVML and detection probes the counters' update period (up to 0.8 s per
// detect), or runs the fake dcgmi: seconds on a loaded 2-core machine, more than Jest's 5 s default.
jest.setTimeout(30_000);

// FIXTURES: a GH200 node as the agent sees it — the hwmon ACPI meters of test/fixtures/gh200
// (Module rewritten to 450 W so the parts fit inside it) and the fake libnvidia-ml
// (test/fixtures/fake-nvml) in its GH200 profile, its module energy counter stepping 45 J per read
// (450 W at the 100 ms reads below), its GPU-scope power field 300 W. No GPU exists where this runs.

const INTERVAL_MS = 100;
const READS = 101; // 10 s

function fakeNvml(...defines: string[]): string {
  const out = path.join(tempDir('erg-fake-nvml-'), 'libfake-nvml.so');
  execFileSync('gcc', ['-shared', '-fPIC', '-O1', ...defines, '-o', out, path.join(FIXTURES, 'fake-nvml', 'fake_nvml.c')]);
  return out;
}

/** Detects the node's sensors, reads them READS times 100 ms apart, and returns what one batch would carry. */
async function sampleNode(nvmlLib: string, moduleMicrowatts = 450_000_000): Promise<TelemetryBatch> {
  const sysfs = copyFixtures('gh200');
  rewrite(path.join(sysfs, 'sys', 'class', 'hwmon', 'hwmon1', 'device', 'power1_average'), moduleMicrowatts);
  const config = configFrom({ 'nvml-lib': nvmlLib, 'sysfs-root': sysfs, 'procfs-root': path.join(FIXTURES, 'procfs'), 'nvidia-smi': '/nonexistent/nvidia-smi' });
  const detection = detectSources(config, createLogger('silent'), () => {});
  for (let k = 0; k < READS; k += 1) for (const { source, sink } of detection.active) source.read(k * INTERVAL_MS, sink);
  await Promise.all(detection.active.map(({ source }) => source.stop()));
  return JSON.parse(detection.store.takeBatch('gh-1', 0, true) as string) as TelemetryBatch;
}

function nodeOf(batch: TelemetryBatch): NodeTelemetry {
  return {
    node: batch.node,
    series: batch.samples.map((c) => ({ sensor: c.sensor, t: c.t, v: c.v })),
    sensors: (batch.sensors ?? []).map((s) => ({ sensor: s.sensor, source: s.source, ...(s.scope ? { scope: s.scope } : {}) })),
  };
}

afterAll(cleanupTempDirs);

describe('a GH200 node: sensor scopes from the agent through the energy figures', () => {
  let batch: TelemetryBatch;
  beforeAll(async () => {
    batch = await sampleNode(fakeNvml('-DENERGY_STEP_MJ=45000'));
  });

  test('the NVML counter arrives as the module\'s, every sensor with its scope', () => {
    const scopes = Object.fromEntries((batch.sensors ?? []).map((s) => [s.sensor, s.scope]));
    expect(scopes).toMatchObject({ 'module0.energy': 'module', 'module0.power': 'module', 'gpu0.power': 'gpu', 'grace0.power': 'grace', 'cpu0.power': 'cpu', 'sysio0.power': 'sysio' });
    expect(scopes).not.toHaveProperty('gpu0.energy');
  });

  test('the total is the module counter\'s, the breakdown\'s GPU energy is the GPU\'s, and GPU + Grace ≤ Module holds', () => {
    const window = { startMs: 0, endMs: (READS - 1) * INTERVAL_MS };
    const seconds = (window.endMs - window.startMs) / 1000;
    const energy = computeRunEnergy({ window, nodes: [nodeOf(batch)] });
    // Module 0 by its counter (450 W), module 1 by its counter too (the fake has two superchips; the
    // second's counter steps alike): the GPU's 300 W never stands in for a module.
    expect(energy.nodes[0]!.sensorsUsed).toEqual(['module0.energy', 'module1.energy']);
    expect(energy.method).toBe('counter');
    expect(energy.components.module).toBeCloseTo(2 * 450 * seconds, 6);
    expect(energy.components.gpu).toBeUndefined();
    expect(energy.breakdown.gpu).toBeCloseTo((300 + 310) * seconds, 6);
    expect(energy.breakdown.grace).toBeCloseTo(121.456 * seconds, 6);
    expect(energy.warnings.filter((w) => /exceeded module/.test(w))).toEqual([]);
  });

  test('the check does fire when the parts do not fit: the fixture\'s own 351 W module meter under GPU 300 W + Grace 121 W', async () => {
    const misfit = await sampleNode(fakeNvml('-DENERGY_STEP_MJ=45000'), 351_234_000);
    const energy = computeRunEnergy({ window: { startMs: 0, endMs: (READS - 1) * INTERVAL_MS }, nodes: [nodeOf(misfit)] });
    expect(energy.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/gpu0 \+ grace0 power exceeded module0 \+ 1 % at \d+ of \d+ timestamps/)]));
  });

  test('a GPU-scope power field that fails: the power-usage fallback has scope unknown, and the breakdown neither adds nor subtracts it', async () => {
    // FIXTURE state (-DFAKE_STATE_DIR: the C library does not see Jest's process.env): GPU 0's scope-0 field is NOT_SUPPORTED.
    const state = tempDir('erg-gpu-state-');
    fs.mkdirSync(path.join(state, 'gpu0'));
    fs.writeFileSync(path.join(state, 'gpu0', 'gpu_power_field'), 'unsupported\n');
    const unknown = await sampleNode(fakeNvml('-DENERGY_STEP_MJ=45000', `-DFAKE_STATE_DIR="${state}"`), 351_234_000);
    expect(unknown.sensors?.find((s) => s.sensor === 'gpu0.power')).toMatchObject({ scope: 'unknown' });
    const energy = computeRunEnergy({ window: { startMs: 0, endMs: (READS - 1) * INTERVAL_MS }, nodes: [nodeOf(unknown)] });
    const seconds = ((READS - 1) * INTERVAL_MS) / 1000;
    // Only GPU 1's 310 W: gpu0.power (nvmlDeviceGetPowerUsage, ~100 W here) is in no figure, and the
    // GPU + Grace ≤ Module check, which it would have passed or failed by its unknown scope, is not made.
    expect(energy.breakdown.gpu).toBeCloseTo(310 * seconds, 6);
    expect(energy.components.module).toBeCloseTo(2 * 450 * seconds, 6);
    expect(energy.warnings).toContain('gh-1: gpu0.power has an unknown scope (its source could not tell the GPU from the whole module); it is not added to or subtracted from any figure');
    expect(energy.warnings.filter((w) => /exceeded module/.test(w))).toEqual([]);
  });
});
