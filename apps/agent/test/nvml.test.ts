import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { waitFor } from '@erg/testkit';
import { createLogger } from '../src/log';
import { SampleStore, sinkFor } from '../src/samples';
import { detectSources } from '../src/sources';
import { detectNvml } from '../src/sources/nvml';
import type { TelemetryBatch } from '../src/wire';
import { agentArgs, cleanupTempDirs, configFrom, copyFixtures, detectContext, FIXTURES, readSpool, recordingSink, REPO_NODE_MODULES, spawnAgent, tempDir } from './helpers';

// gcc builds the fake NVML and detection probes the counters' update period (up to 0.8 s per
// detect), or runs the fake dcgmi: seconds on a loaded 2-core machine, more than Jest's 5 s default.
jest.setTimeout(30_000);

// NVML through koffi against a FAKE libnvidia-ml (test/fixtures/fake-nvml/fake_nvml.c), because
// no GPU exists where these tests run. It is compiled here with gcc; its header lists its values.

const compile = (name: string, ...defines: string[]): string => {
  const out = path.join(tempDir('erg-fake-nvml-'), name);
  execFileSync('gcc', ['-shared', '-fPIC', '-O1', ...defines, '-o', out, path.join(FIXTURES, 'fake-nvml', 'fake_nvml.c')]);
  return out;
};
let lib: string;
beforeAll(() => {
  lib = compile('libfake-nvml.so');
});
afterAll(cleanupTempDirs);

/**
 * The fake claiming driver `branch` (-DFAKE_DRIVER; the fake's header lists what each profile
 * refuses; without it the fake is R550) and, given `state`, reading the GPU state from there
 * (-DFAKE_STATE_DIR): the environment variables that say the same do not reach the C library
 * from inside Jest, whose process.env is a copy.
 */
const fakeWith = (name: string, branch: 535 | 550 | 575, state?: Record<string, string>): string => {
  const defines = [`-DFAKE_DRIVER=${branch}`];
  if (state) {
    const dir = tempDir('erg-gpu-state-');
    for (const [file, value] of Object.entries(state)) {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), `${value}\n`);
    }
    defines.push(`-DFAKE_STATE_DIR="${dir}"`);
  }
  return compile(name, ...defines);
};
let r575: string;
beforeAll(() => {
  r575 = fakeWith('libfake-nvml-575.so', 575);
});

describe('nvml source (fake NVML library)', () => {
  test('GH200 (C2C superchip): the energy counter is the module\'s, GPU power is the GPU-scope field; every sensor says its scope', async () => {
    const ctx = detectContext({ 'nvml-lib': lib });
    const source = detectNvml(ctx);
    expect(source).not.toBeNull();
    expect(source?.sensors).toEqual([
      { sensor: 'gpu0.power', source: 'nvml', unit: 'W', scope: 'gpu' },
      { sensor: 'module0.energy', source: 'nvml', unit: 'J', scope: 'module' },
      { sensor: 'gpu0.clock', source: 'nvml', unit: 'MHz', scope: 'gpu' },
      { sensor: 'gpu0.util', source: 'nvml', unit: '%', scope: 'gpu' },
      { sensor: 'gpu0.mem_used', source: 'nvml', unit: 'B', scope: 'gpu' },
      { sensor: 'module0.power', source: 'nvml', unit: 'W', scope: 'module' },
      // The state in force: the GPU's enforced limit, applications clock, temperature, clock-event reasons, and the module's limit.
      { sensor: 'gpu0.power_limit', source: 'nvml', unit: 'W', scope: 'gpu' },
      { sensor: 'gpu0.clock_app', source: 'nvml', unit: 'MHz', scope: 'gpu' },
      { sensor: 'gpu0.temp', source: 'nvml', unit: '°C', scope: 'gpu' },
      { sensor: 'gpu0.clock_events', source: 'nvml', unit: 'bitmask', scope: 'gpu' },
      { sensor: 'module0.power_limit', source: 'nvml', unit: 'W', scope: 'module' },
      { sensor: 'gpu0.pcie_tx', source: 'nvml', unit: 'B/s', scope: 'gpu' },
      { sensor: 'gpu0.pcie_rx', source: 'nvml', unit: 'B/s', scope: 'gpu' },
      // Data movement (nvml-links.ts): GPU 0's NVLink. No NVLink-C2C: GPM's C2C metrics need R575 (the next test).
      { sensor: 'gpu0.nvlink_tx', source: 'nvml', unit: 'B/s', scope: 'gpu' },
      { sensor: 'gpu0.nvlink_rx', source: 'nvml', unit: 'B/s', scope: 'gpu' },
      { sensor: 'gpu1.power', source: 'nvml', unit: 'W', scope: 'gpu' },
      { sensor: 'module1.energy', source: 'nvml', unit: 'J', scope: 'module' },
      { sensor: 'gpu1.clock', source: 'nvml', unit: 'MHz', scope: 'gpu' },
      { sensor: 'gpu1.util', source: 'nvml', unit: '%', scope: 'gpu' },
      { sensor: 'gpu1.mem_used', source: 'nvml', unit: 'B', scope: 'gpu' },
      { sensor: 'gpu1.power_limit', source: 'nvml', unit: 'W', scope: 'gpu' },
      { sensor: 'gpu1.clock_app', source: 'nvml', unit: 'MHz', scope: 'gpu' },
      { sensor: 'gpu1.temp', source: 'nvml', unit: '°C', scope: 'gpu' },
      { sensor: 'gpu1.clock_events', source: 'nvml', unit: 'bitmask', scope: 'gpu' },
      { sensor: 'module1.power_limit', source: 'nvml', unit: 'W', scope: 'module' },
    ]);
    expect(source?.details).toMatchObject({
      driverVersion: '550.54.15-fake',
      gpuCount: 2,
      clockEventsCall: 'nvmlDeviceGetCurrentClocksEventReasons',
      devices: [
        // The counter's scope from NVML_FI_DEV_ENERGY (field 191), which answers it at scope 1 (module) only.
        { index: 0, name: 'NVIDIA GH200 480GB (fake)', superchip: true, superchipFrom: 'nvmlDeviceGetC2cModeInfoV', energyScope: 'module', energyScopeFrom: 'NVML_FI_DEV_ENERGY' },
        { index: 1, name: 'NVIDIA GH200 480GB (fake)', superchip: true, superchipFrom: 'nvmlDeviceGetC2cModeInfoV', energyScope: 'module', energyScopeFrom: 'NVML_FI_DEV_ENERGY' },
      ],
    });
    // R550: the applications clock through nvmlDeviceGetClock (not the call NVML 13 deprecates); no
    // nvmlDeviceGetTemperatureV before R570, so the older call; no GPM C2C metrics before R575, and the note says so.
    expect((source?.details.devices as { calls: unknown }[])[0]?.calls).toEqual({ clock_app: 'nvmlDeviceGetClock(APP_CLOCK_TARGET)', temp: 'nvmlDeviceGetTemperature' });
    expect(ctx.notes).toEqual(expect.arrayContaining([
      'gpu0.temp: nvmlDeviceGetTemperatureV NVML_ERROR_FUNCTION_NOT_FOUND; nvmlDeviceGetTemperature instead',
      'gpu0.c2c_tx/rx: GPM C2C metrics NVML_ERROR_NOT_SUPPORTED (needs driver ≥ 575 / DCGM ≥ 4.1; this driver is 550)',
      'gpu1.c2c_tx/rx: GPM C2C metrics NVML_ERROR_NOT_SUPPORTED (needs driver ≥ 575 / DCGM ≥ 4.1; this driver is 550)',
    ]));
    // GPU 1 has no module-scope power, no PCIe counters and no NVLink links in the fake: those sensors do not exist.
    expect(ctx.notes).toEqual(expect.arrayContaining(['module1.power: NVML_ERROR_NOT_SUPPORTED', 'gpu1.pcie_tx/rx: NVML_ERROR_NOT_SUPPORTED', 'gpu1.nvlink_tx/rx: no NVLink links (NVML_FI_DEV_NVLINK_LINK_COUNT 0)']));

    const sink = recordingSink();
    const names = source?.sensors.map((s) => s.sensor) ?? [];
    const values = (t: number) => Object.fromEntries(sink.samples.filter((s) => s.t === t).map((s) => [names[s.local], s.v]));
    source?.read(1000, sink);
    source?.read(2000, sink);
    // Detection made calls 0 and 1 of each counter (the sensor, then its scope beside field 191) and
    // the update probe calls 2–11 (this fake's counter steps at every call, so the probe stopped
    // after nine changes); these reads are calls 12 and 13.
    expect(values(1000)).toMatchObject({
      'gpu0.power': 300, // GPU scope (field 186, scope 0), not nvmlDeviceGetPowerUsage
      'module0.energy': 5000003, // 5000000000 + 250·12 mJ — past 2^32 mJ
      'gpu0.clock': 1980,
      'gpu0.util': 50,
      'gpu0.mem_used': 1024 ** 3,
      'module0.power': 450,
      'gpu1.power': 310,
      'module1.energy': 5001003,
      'gpu1.clock': 1970,
      'gpu1.util': 51,
      'gpu1.mem_used': 2 * 1024 ** 3,
      // The fake's defaults without ERG_FAKE_GPU_STATE: nothing set, nothing held down.
      'gpu0.power_limit': 900,
      'gpu0.clock_app': 1980,
      'gpu0.temp': 45,
      'gpu0.clock_events': 0,
      'module0.power_limit': 1000,
      'gpu1.temp': 46,
    });
    expect(values(2000)).toMatchObject({ 'gpu0.power': 300, 'module0.energy': 5000003.25, 'gpu1.power': 310, 'gpu0.power_limit': 900 });
    // The state sensors are read at most once a second: a cycle 100 ms later reads only the others.
    source?.read(2100, sink);
    expect(Object.keys(values(2100))).toContain('gpu0.power');
    expect(Object.keys(values(2100)).filter((n) => /\.(power_limit|clock_app|temp|clock_events)$/.test(n))).toEqual([]);
    expect(source?.identity?.()).toEqual({
      driverVersion: '550.54.15-fake',
      cudaVersion: '12.4',
      nvmlVersion: '12.550.54.15',
      gpus: [
        { index: 0, name: 'NVIDIA GH200 480GB (fake)', uuid: 'GPU-fake0000-0000-0000-0000-000000000000', vbios: '96.00.9F.00.01' },
        { index: 1, name: 'NVIDIA GH200 480GB (fake)', uuid: 'GPU-fake0000-0000-0000-0000-000000000001', vbios: '96.00.9F.00.01' },
      ],
    });
    // PCIe throughput runs on koffi's worker threads (the call blocks 20 ms) and carries the time
    // of the cycle that started it; a new round starts only once the last one finished.
    await waitFor(() => sink.samples.filter((s) => names[s.local]?.startsWith('gpu0.pcie')).length >= 2, { timeoutMs: 5000, intervalMs: 10 });
    const pcie = sink.samples.filter((s) => names[s.local]?.startsWith('gpu0.pcie'));
    expect(pcie).toEqual(expect.arrayContaining([
      { local: names.indexOf('gpu0.pcie_tx'), t: 1000, v: 1000 * 1000 },
      { local: names.indexOf('gpu0.pcie_rx'), t: 1000, v: 2000 * 1000 },
    ]));
    expect(sink.dropped).toEqual([]);
    await source?.stop();
  });

  test('H100 (discrete): the counter is the GPU\'s and power is nvmlDeviceGetPowerUsage, as before; no module power limit', async () => {
    const ctx = detectContext({ 'nvml-lib': compile('libfake-nvml-h100.so', '-DFAKE_H100') });
    const source = detectNvml(ctx);
    expect(source?.sensors.filter((s) => s.sensor.startsWith('gpu0.') || s.sensor.startsWith('module'))).toEqual([
      // nvmlDeviceGetPowerUsage on Hopper (compute capability 9.0): a 1 s average, per nvml.h.
      { sensor: 'gpu0.power', source: 'nvml', unit: 'W', scope: 'gpu', averagingMs: 1000 },
      { sensor: 'gpu0.energy', source: 'nvml', unit: 'J', scope: 'gpu' },
      { sensor: 'gpu0.clock', source: 'nvml', unit: 'MHz', scope: 'gpu' },
      { sensor: 'gpu0.util', source: 'nvml', unit: '%', scope: 'gpu' },
      { sensor: 'gpu0.mem_used', source: 'nvml', unit: 'B', scope: 'gpu' },
      { sensor: 'gpu0.power_limit', source: 'nvml', unit: 'W', scope: 'gpu' },
      { sensor: 'gpu0.clock_app', source: 'nvml', unit: 'MHz', scope: 'gpu' },
      { sensor: 'gpu0.temp', source: 'nvml', unit: '°C', scope: 'gpu' },
      { sensor: 'gpu0.clock_events', source: 'nvml', unit: 'bitmask', scope: 'gpu' },
      { sensor: 'gpu0.pcie_tx', source: 'nvml', unit: 'B/s', scope: 'gpu' },
      { sensor: 'gpu0.pcie_rx', source: 'nvml', unit: 'B/s', scope: 'gpu' },
      { sensor: 'gpu0.nvlink_tx', source: 'nvml', unit: 'B/s', scope: 'gpu' },
      { sensor: 'gpu0.nvlink_rx', source: 'nvml', unit: 'B/s', scope: 'gpu' },
    ]);
    expect(source?.sensors.map((s) => s.sensor).filter((n) => n.endsWith('.power_limit'))).toEqual(['gpu0.power_limit', 'gpu1.power_limit']);
    // A discrete GPU is not probed for C2C.
    expect(source?.sensors.map((s) => s.sensor).filter((n) => n.includes('.c2c_'))).toEqual([]);
    expect(source?.details).toMatchObject({ devices: [{ index: 0, name: 'NVIDIA H100 80GB HBM3 (fake)', superchip: false, computeCapability: '9.0' }, { index: 1, superchip: false }] });
    const sink = recordingSink();
    const names = source?.sensors.map((s) => s.sensor) ?? [];
    source?.read(1000, sink);
    const at = Object.fromEntries(sink.samples.map((s) => [names[s.local], s.v]));
    // Energy: call 12 (detection 0 and 1, the update probe 2–11).
    expect(at).toMatchObject({ 'gpu0.power': 101, 'gpu0.energy': 5000003, 'gpu1.energy': 5001003, 'gpu0.power_limit': 700 });
    await source?.stop();
  });

  test('sensor timing: only nvmlDeviceGetPowerUsage averages (1 s from Ampere but GA100 on); the GPU- and module-scope power fields are instantaneous', async () => {
    const gh200 = detectNvml(detectContext({ 'nvml-lib': lib }));
    const timing = (source: typeof gh200) => Object.fromEntries((source?.sensors ?? []).filter((s) => s.averagingMs !== undefined || s.updateMs !== undefined).map((s) => [s.sensor, { averagingMs: s.averagingMs, updateMs: s.updateMs }]));
    // GH200: gpu0.power is NVML_FI_DEV_POWER_INSTANT at GPU scope, module0.power at module scope.
    expect(timing(gh200)).toEqual({});
    await gh200?.stop();
    const powerUsage = async (...defines: string[]) => {
      const source = detectNvml(detectContext({ 'nvml-lib': compile(`libfake-nvml-${defines.join('')}.so`, '-DFAKE_H100', ...defines) }));
      const found = source?.sensors.filter((s) => s.sensor.endsWith('.power')).map((s) => s.averagingMs);
      await source?.stop();
      return found;
    };
    expect(await powerUsage()).toEqual([1000, 1000]); // Hopper, 9.0
    expect(await powerUsage('-DFAKE_COMPUTE_CAPABILITY=86')).toEqual([1000, 1000]); // Ampere GA10x
    expect(await powerUsage('-DFAKE_COMPUTE_CAPABILITY=80')).toEqual([undefined, undefined]); // GA100 (A100, A30): instantaneous
    expect(await powerUsage('-DNO_CC_CALL')).toEqual([undefined, undefined]); // the library cannot say: unknown
  });

  test('an energy counter that changes on its own clock declares the update period the probe measured', async () => {
    // 100 ms (the slow end of what tools observe). The probe reads every 1 ms, but on a loaded
    // machine a 1 ms sleep takes several: it resolves a period of at least 3 read spacings only
    // (sensor-timing.ts), so a faster fake counter would be declared or not by the machine's load.
    // This one resolves while a read round takes up to 33 ms, and the probe's 800 ms see 7 or 8
    // changes of it.
    const ctx = detectContext({ 'nvml-lib': compile('libfake-nvml-100ms.so', '-DFAKE_H100', '-DENERGY_UPDATE_MS=100') });
    const source = detectNvml(ctx);
    const energy = source?.sensors.filter((s) => s.sensor.endsWith('.energy')) ?? [];
    expect(energy.map((s) => s.sensor)).toEqual(['gpu0.energy', 'gpu1.energy']);
    for (const s of energy) {
      expect(s.updateMs).toBeGreaterThanOrEqual(80); // 100 ms, within a read round either way
      expect(s.updateMs).toBeLessThanOrEqual(130);
    }
    expect(source?.details.energyUpdates).toMatchObject({ 'gpu0.energy': { updateMs: energy[0]?.updateMs } });
    const updates = source?.details.energyUpdates as Record<string, { changes: number }>;
    for (const sensor of ['gpu0.energy', 'gpu1.energy']) expect(updates[sensor]!.changes).toBeGreaterThanOrEqual(5);
    await source?.stop();
  });

  test('a counter that changes at every read (faster than the probe resolves) or too seldom declares no update period, and meta says what was seen', async () => {
    const everyRead = detectNvml(detectContext({ 'nvml-lib': lib }));
    expect(everyRead?.sensors.find((s) => s.sensor === 'module0.energy')).not.toHaveProperty('updateMs');
    expect(everyRead?.details.energyUpdates).toMatchObject({ 'module0.energy': { updateMs: null, changes: 9, reads: 9 } });
    await everyRead?.stop();
    const seldom = detectNvml(detectContext({ 'nvml-lib': compile('libfake-nvml-2s.so', '-DFAKE_H100', '-DENERGY_UPDATE_MS=2000') }));
    expect(seldom?.sensors.find((s) => s.sensor === 'gpu0.energy')).not.toHaveProperty('updateMs');
    expect(seldom?.details.energyUpdates).toMatchObject({ 'gpu0.energy': { updateMs: null, changes: 0 } });
    await seldom?.stop();
  });

  test('without nvmlDeviceGetC2cModeInfoV (older drivers) a superchip is told by its name', async () => {
    const ctx = detectContext({ 'nvml-lib': compile('libfake-nvml-no-c2c.so', '-DNO_C2C_CALL') });
    const source = detectNvml(ctx);
    expect(source?.sensors.map((s) => s.sensor)).toEqual(expect.arrayContaining(['module0.energy', 'module1.energy']));
    expect(source?.sensors.map((s) => s.sensor)).not.toContain('gpu0.energy');
    expect(source?.details).toMatchObject({ devices: [{ superchip: true, superchipFrom: 'name' }, { superchip: true, superchipFrom: 'name' }] });
    await source?.stop();
  });

  test('a library without nvmlDeviceGetCurrentClocksEventReasons (before the rename) reads the reasons with the throttle-reasons call', async () => {
    const ctx = detectContext({ 'nvml-lib': compile('libfake-nvml-old-reasons.so', '-DNO_CLOCK_EVENTS_CALL') });
    const source = detectNvml(ctx);
    expect(source?.sensors.map((s) => s.sensor)).toEqual(expect.arrayContaining(['gpu0.clock_events', 'gpu1.clock_events']));
    expect(source?.details).toMatchObject({ clockEventsCall: 'nvmlDeviceGetCurrentClocksThrottleReasons', missingFunctions: ['nvmlDeviceGetCurrentClocksEventReasons'] });
    const sink = recordingSink();
    source?.read(1000, sink);
    const names = source?.sensors.map((s) => s.sensor) ?? [];
    expect(sink.samples.find((s) => names[s.local] === 'gpu0.clock_events')?.v).toBe(0);
    await source?.stop();
  });

  test('nvmlDeviceGetC2cModeInfoV\'s three answers, and R535 (before the call, R545): which GPU is a superchip, and how erg knows', async () => {
    // FIXTURE state: gpu0 answers SUCCESS with isC2cEnabled 0, gpu1 NOT_SUPPORTED (both named GH200).
    const ctx = detectContext({ 'nvml-lib': fakeWith('libfake-nvml-c2c.so', 550, { 'gpu0/c2c_mode': '0', 'gpu1/c2c_mode': 'unsupported' }) });
    const source = detectNvml(ctx);
    expect(source?.details).toMatchObject({
      devices: [
        // isC2cEnabled 0 on a device named GH200: still a superchip (by its name), with a note.
        { superchip: true, superchipFrom: 'name', energyScope: 'module', energyScopeFrom: 'NVML_FI_DEV_ENERGY' },
        // NOT_SUPPORTED: not a C2C device — yet field 191 says its counter is the module's, so it stays moduleN.energy.
        { superchip: false, superchipFrom: 'nvmlDeviceGetC2cModeInfoV', energyScope: 'module', energyScopeFrom: 'NVML_FI_DEV_ENERGY' },
      ],
    });
    expect(ctx.notes).toContain('gpu0: nvmlDeviceGetC2cModeInfoV says C2C is not enabled (isC2cEnabled 0) on "NVIDIA GH200 480GB (fake)"; treated as a superchip by its name');
    expect(source?.sensors.map((s) => s.sensor).filter((n) => n.endsWith('.energy'))).toEqual(['module0.energy', 'module1.energy']);
    await source?.stop();
    // SUCCESS with isC2cEnabled 1 is the default GH200 profile (the first test); R535 lacks the call: the name decides.
    const old = detectNvml(detectContext({ 'nvml-lib': fakeWith('libfake-nvml-535.so', 535) }));
    expect(old?.details).toMatchObject({ driverVersion: '535.183.01-fake', devices: [{ superchip: true, superchipFrom: 'name' }, { superchip: true, superchipFrom: 'name' }] });
    await old?.stop();
  });

  test('the energy counter\'s scope comes from NVML_FI_DEV_ENERGY at scopes 0 and 1, not the name; where the field cannot tell, the superchip test decides and a note says so', async () => {
    // FIXTURE state: a GH200 whose counter answers at GPU scope, and one where field 191 answers at neither.
    const ctx = detectContext({ 'nvml-lib': fakeWith('libfake-nvml-energy-scope.so', 550, { 'gpu0/energy_scope': 'gpu', 'gpu1/energy_scope': 'unsupported' }) });
    const source = detectNvml(ctx);
    expect(source?.sensors.filter((s) => s.sensor.endsWith('.energy'))).toEqual([
      { sensor: 'gpu0.energy', source: 'nvml', unit: 'J', scope: 'gpu' },
      { sensor: 'module1.energy', source: 'nvml', unit: 'J', scope: 'module' },
    ]);
    expect(source?.details).toMatchObject({ devices: [{ energyScope: 'gpu', energyScopeFrom: 'NVML_FI_DEV_ENERGY' }, { energyScope: 'module', energyScopeFrom: 'nvmlDeviceGetC2cModeInfoV' }] });
    expect(ctx.notes).toContain('gpu1.energy: NVML_FI_DEV_ENERGY answered at neither power scope (NVML_ERROR_NOT_SUPPORTED); its scope is taken from nvmlDeviceGetC2cModeInfoV: module');
    await source?.stop();
  });

  test('a superchip whose GPU-scope power field fails: nvmlDeviceGetPowerUsage is filed with scope unknown, never as the GPU\'s', async () => {
    // FIXTURE state: GPU 1's scope-0 power field answers NOT_SUPPORTED, as Zeus records for GH200.
    const ctx = detectContext({ 'nvml-lib': fakeWith('libfake-nvml-unknown-scope.so', 550, { 'gpu1/gpu_power_field': 'unsupported' }) });
    const source = detectNvml(ctx);
    expect(source?.sensors.filter((s) => s.sensor.endsWith('.power'))).toEqual([
      { sensor: 'gpu0.power', source: 'nvml', unit: 'W', scope: 'gpu' },
      { sensor: 'module0.power', source: 'nvml', unit: 'W', scope: 'module' },
      { sensor: 'gpu1.power', source: 'nvml', unit: 'W', scope: 'unknown', averagingMs: 1000 },
    ]);
    expect(ctx.notes).toContain('gpu1.power: GPU-scope power field NVML_ERROR_NOT_SUPPORTED; nvmlDeviceGetPowerUsage instead, whose scope (GPU or module) is unknown on a superchip: filed with scope unknown');
    await source?.stop();
  });

  test('absent, with the reason, when the library cannot be loaded', () => {
    const ctx = detectContext({ 'nvml-lib': '/nonexistent/libnvidia-ml.so.1' });
    expect(detectNvml(ctx)).toBeNull();
    expect(ctx.notes.join()).toContain('/nonexistent/libnvidia-ml.so.1');
  });

  test('with NVML present, nvidia-smi is not used; hwmon keeps module0.power and NVML\'s is shadowed', async () => {
    const config = configFrom({ 'nvml-lib': lib, 'nvidia-smi': path.join(FIXTURES, 'nvidia-smi', 'nvidia-smi'), 'sysfs-root': copyFixtures('gh200'), 'procfs-root': path.join(FIXTURES, 'procfs') });
    const d = detectSources(config, createLogger('silent'), () => {});
    expect(d.active.map((a) => a.source.name)).toEqual(['hwmon', 'nvml', 'procfs']);
    expect(d.shadowed).toEqual([{ sensor: 'module0.power', source: 'nvml', keptFrom: 'hwmon' }]);
    await Promise.all(d.active.map((a) => a.source.stop()));
  });

  test('a sensor whose call turns NOT_SUPPORTED at run time leaves the sensor set; the next batch lists the new set', async () => {
    // Detection is call 0, the first read call 1; from call 2 on GPU 1's power is NOT_SUPPORTED.
    const failing = compile('libfake-nvml-failing.so', '-DGPU1_POWER_FAILS_AFTER=2');
    const store = new SampleStore();
    const source = detectNvml(detectContext({ 'nvml-lib': failing }));
    const ids = source?.sensors.map((s) => store.register(s)) ?? [];
    const drops: string[] = [];
    const sink = sinkFor(store, ids, (s, why) => drops.push(`${s} ${why}`));
    source?.read(1, sink);
    const first = JSON.parse(store.takeBatch('n', 0, true) as string) as TelemetryBatch;
    const version = store.version;
    source?.read(2, sink);
    source?.read(3, sink);
    expect(drops).toEqual(['gpu1.power NVML_ERROR_NOT_SUPPORTED']);
    expect(store.version).toBe(version + 1);
    const second = JSON.parse(store.takeBatch('n', 1, true) as string) as TelemetryBatch;
    expect(first.samples.find((c) => c.sensor === 'gpu1.power')?.t).toEqual([1]);
    expect(second.samples.find((c) => c.sensor === 'gpu1.power')).toBeUndefined();
    expect(second.sensors?.map((s) => s.sensor)).not.toContain('gpu1.power');
    expect(second.samples.find((c) => c.sensor === 'gpu0.power')?.t).toEqual([2, 3]);
    await source?.stop();
  });

  test('the bundled agent with --nvml-lib pointing at the fake spools GPU samples and records the driver in meta', async () => {
    const spool = tempDir();
    // The bundle leaves koffi external: point NODE_PATH at the repository's node_modules to find it.
    const h100 = compile('libfake-nvml-h100-bundle.so', '-DFAKE_H100');
    const agent = await spawnAgent(agentArgs(spool, tempDir(), ['--nvml-lib', h100, '--interval-ms', '50', '--batch-ms', '200', '--sources', 'nvml']), { NODE_PATH: REPO_NODE_MODULES });
    await waitFor(() => readSpool(spool).length >= 2, { what: 'two spooled batches', timeoutMs: 15_000 });
    agent.child.kill('SIGTERM');
    expect((await agent.exited).code).toBe(0);
    const batches = readSpool(spool);
    expect(batches[0]?.sensors?.map((s) => s.sensor)).toContain('gpu1.energy');
    const power = batches.flatMap((b) => b.samples.filter((c) => c.sensor === 'gpu0.power').flatMap((c) => c.v));
    expect(power.length).toBeGreaterThan(3);
    // The fake ramps by 1 W per call.
    power.slice(1).forEach((v, i) => expect(v - (power[i] as number)).toBeCloseTo(1, 6));
    const meta = JSON.parse(fs.readFileSync(path.join(spool, 'node1.meta.json'), 'utf8')) as { sources: { name: string; details: { driverVersion: string } }[] };
    expect(meta.sources[0]).toMatchObject({ name: 'nvml', details: { driverVersion: '550.54.15-fake' } });
  });
});

describe('nvml source: data movement (NVLink field values, NVLink-C2C through GPM; fake NVML library)', () => {
  test('NVLink: the all-links RAW counters (KiB) become B/s over NVML\'s own timestamps; C2C (R575): GPM\'s MiB/s as B/s', async () => {
    const ctx = detectContext({ 'nvml-lib': r575 });
    const source = detectNvml(ctx);
    expect(source?.details).toMatchObject({ driverVersion: '575.57.08-fake' });
    // R575 has nvmlDeviceGetTemperatureV: no fallback, no note.
    expect((source?.details.devices as { calls: unknown }[])[0]?.calls).toEqual({ clock_app: 'nvmlDeviceGetClock(APP_CLOCK_TARGET)', temp: 'nvmlDeviceGetTemperatureV' });
    expect(ctx.notes.filter((n) => /temp|c2c/.test(n))).toEqual([]);
    const names = source?.sensors.map((s) => s.sensor) ?? [];
    const sink = recordingSink();
    const at = (t: number) => Object.fromEntries(sink.samples.filter((s) => s.t === t && /\.(nvlink|c2c)_/.test(names[s.local] ?? '')).map((s) => [names[s.local], s.v]));
    source?.read(1000, sink);
    // The fake's counters step 1024 / 2048 KiB per call, its timestamps 100 ms: 10 / 20 MiB/s.
    // GPM: GPU 0 2048 / 1024 MiB/s, GPU 1 512 / 256 MiB/s.
    expect(at(1000)).toEqual({
      'gpu0.nvlink_tx': 10 * 1024 * 1024,
      'gpu0.nvlink_rx': 20 * 1024 * 1024,
      'gpu0.c2c_tx': 2048 * 1024 * 1024,
      'gpu0.c2c_rx': 1024 * 1024 * 1024,
      'gpu1.c2c_tx': 512 * 1024 * 1024,
      'gpu1.c2c_rx': 256 * 1024 * 1024,
    });
    // 50 ms later: NVLink again (a counter read every cycle); GPM not before 100 ms since its last sample (nvml.h).
    source?.read(1050, sink);
    expect(Object.keys(at(1050)).sort()).toEqual(['gpu0.nvlink_rx', 'gpu0.nvlink_tx']);
    source?.read(1100, sink);
    expect(Object.keys(at(1100))).toEqual(expect.arrayContaining(['gpu0.c2c_tx', 'gpu1.c2c_rx']));
    expect(source?.details).toMatchObject({ links: { nvlink: [0], c2c: [0, 1] } });
    expect(source?.stats?.()).toEqual({ errors: 0 });
    await source?.stop();
  });

  test('without GPM calls in the library there are no C2C sensors, and a note says why', async () => {
    const ctx = detectContext({ 'nvml-lib': compile('libfake-nvml-no-gpm.so', '-DNO_GPM') });
    const source = detectNvml(ctx);
    expect(source?.sensors.map((s) => s.sensor).filter((n) => n.includes('.c2c_'))).toEqual([]);
    expect(ctx.notes).toEqual(expect.arrayContaining(['gpu0.c2c_tx/rx: this NVML library has no GPM calls (needs driver ≥ 575 / DCGM ≥ 4.1; this driver is 550)']));
    expect(source?.details).toMatchObject({ missingFunctions: expect.arrayContaining(['nvmlGpmSampleGet', 'nvmlGpmMetricsGet']) });
    await source?.stop();
  });

  test('link traffic an earlier source already reports (DCGM) is not read again by NVML', async () => {
    const ctx = { ...detectContext({ 'nvml-lib': r575 }), taken: new Set(['gpu0.pcie_tx', 'gpu0.pcie_rx', 'gpu0.nvlink_tx', 'gpu0.nvlink_rx', 'gpu0.c2c_tx', 'gpu0.c2c_rx']) };
    const source = detectNvml(ctx);
    expect(source?.sensors.map((s) => s.sensor).filter((n) => /\.(pcie|nvlink|c2c)_/.test(n))).toEqual(['gpu1.c2c_tx', 'gpu1.c2c_rx']);
    await source?.stop();
  });
});
