import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { waitFor } from '@erg/testkit';
import type { TelemetryBatch } from '../src/wire';
import { agentArgs, cleanupTempDirs, FIXTURES, readSpool, REPO_NODE_MODULES, spawnAgent, tempDir, type AgentProcess } from './helpers';

// gcc builds the fake NVML and detection probes the counters' update period (up to 0.8 s per
// detect), or runs the fake dcgmi: seconds on a loaded 2-core machine, more than Jest's 5 s default.
jest.setTimeout(30_000);

// The state the GPUs are in (power limit, locked/applications clocks, temperature, clock-event
// reasons), read by the bundled agent from the FAKE libnvidia-ml (test/fixtures/fake-nvml), which
// takes it from the directory ERG_FAKE_GPU_STATE names — as a fake nvidia-smi writes it when told
// -pl or -lgc. No GPU exists where this runs.

const compile = (name: string, ...defines: string[]): string => {
  const out = path.join(tempDir('erg-fake-nvml-'), name);
  execFileSync('gcc', ['-shared', '-fPIC', '-O1', ...defines, '-o', out, path.join(FIXTURES, 'fake-nvml', 'fake_nvml.c')]);
  return out;
};
/** Writes one file of the fake's state directory. */
const setState = (dir: string, file: string, value: string) => {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  fs.writeFileSync(path.join(dir, file), `${value}\n`);
};
const values = (batches: TelemetryBatch[], sensor: string) => batches.flatMap((b) => b.samples.filter((c) => c.sensor === sensor).flatMap((c) => c.v));
const times = (batches: TelemetryBatch[], sensor: string) => batches.flatMap((b) => b.samples.filter((c) => c.sensor === sensor).flatMap((c) => c.t));

const running: AgentProcess[] = [];
afterEach(() => {
  for (const a of running.splice(0)) if (a.child.exitCode === null && a.child.signalCode === null) a.child.kill('SIGKILL');
});
afterAll(cleanupTempDirs);

async function startAgent(lib: string, state: string, spool = tempDir()): Promise<{ agent: AgentProcess; spool: string }> {
  const agent = await spawnAgent(agentArgs(spool, tempDir(), ['--nvml-lib', lib, '--interval-ms', '100', '--batch-ms', '200', '--sources', 'nvml']), {
    // The bundle leaves koffi external: NODE_PATH finds it in the repository's node_modules.
    NODE_PATH: REPO_NODE_MODULES,
    ERG_FAKE_GPU_STATE: state,
  });
  running.push(agent);
  return { agent, spool };
}
async function stop(agent: AgentProcess): Promise<void> {
  agent.child.kill('SIGTERM');
  expect((await agent.exited).code).toBe(0);
}

describe('the state in force, as sensors (fake NVML with ERG_FAKE_GPU_STATE)', () => {
  test('GH200: the limit, locked clocks, applications clocks and reasons set in the state arrive in the batches; a change mid-run shows', async () => {
    const state = tempDir('erg-gpu-state-');
    setState(state, 'gpu0/enforced_power_limit', '300');
    setState(state, 'gpu1/locked_clocks', '1200,1500');
    setState(state, 'gpu0/applications_clocks', '2619,1755'); // as nvidia-smi -ac 2619,1755 sets them
    setState(state, 'gpu0/clock_events', '0x20'); // sw_thermal_slowdown
    const { agent, spool } = await startAgent(compile('libfake-nvml.so'), state);
    await waitFor(() => values(readSpool(spool), 'gpu0.power_limit').length >= 2, { what: 'two state readings', timeoutMs: 15_000 });
    let batches = readSpool(spool);
    expect(batches[0]?.sensors?.filter((s) => /\.(power_limit|clock_app|temp|clock_events)$/.test(s.sensor))).toEqual([
      { sensor: 'gpu0.power_limit', source: 'nvml', unit: 'W', scope: 'gpu' },
      { sensor: 'gpu0.clock_app', source: 'nvml', unit: 'MHz', scope: 'gpu' },
      { sensor: 'gpu0.temp', source: 'nvml', unit: '°C', scope: 'gpu' },
      { sensor: 'gpu0.clock_events', source: 'nvml', unit: 'bitmask', scope: 'gpu' },
      { sensor: 'module0.power_limit', source: 'nvml', unit: 'W', scope: 'module' },
      { sensor: 'gpu1.power_limit', source: 'nvml', unit: 'W', scope: 'gpu' },
      { sensor: 'gpu1.clock_app', source: 'nvml', unit: 'MHz', scope: 'gpu' },
      { sensor: 'gpu1.temp', source: 'nvml', unit: '°C', scope: 'gpu' },
      { sensor: 'gpu1.clock_events', source: 'nvml', unit: 'bitmask', scope: 'gpu' },
      { sensor: 'module1.power_limit', source: 'nvml', unit: 'W', scope: 'module' },
    ]);
    // The first batch names the GPUs and the driver stack (the fingerprint); later ones do not.
    expect(batches[0]?.fingerprint).toMatchObject({
      gpus: [
        { index: 0, name: 'NVIDIA GH200 480GB (fake)', uuid: 'GPU-fake0000-0000-0000-0000-000000000000', vbios: '96.00.9F.00.01' },
        { index: 1, name: 'NVIDIA GH200 480GB (fake)', uuid: 'GPU-fake0000-0000-0000-0000-000000000001', vbios: '96.00.9F.00.01' },
      ],
      driverVersion: '550.54.15-fake',
      cudaVersion: '12.4',
      nvmlVersion: '12.550.54.15',
    });
    expect(batches.slice(1).every((b) => b.fingerprint === undefined)).toBe(true);
    expect(new Set(values(batches, 'gpu0.power_limit'))).toEqual(new Set([300]));
    expect(new Set(values(batches, 'gpu1.power_limit'))).toEqual(new Set([900])); // the profile's default
    expect(values(batches, 'gpu1.clock').every((v) => v <= 1500)).toBe(true);
    // Locked clocks are not applications clocks: a real GPU's applications clock (what gpuN.clock_app
    // records) stays where it was under -lgc, and NVML has no call that reads locked clocks back —
    // the observed SM clock (gpuN.clock, above) is what shows them.
    expect(new Set(values(batches, 'gpu1.clock_app'))).toEqual(new Set([1980]));
    expect(new Set(values(batches, 'gpu0.clock_app'))).toEqual(new Set([1755]));
    expect(new Set(values(batches, 'gpu0.clock'))).toEqual(new Set([1980])); // not locked
    expect(new Set(values(batches, 'gpu0.clock_events'))).toEqual(new Set([32]));
    expect(new Set(values(batches, 'gpu1.clock_events'))).toEqual(new Set([0]));
    expect(new Set(values(batches, 'gpu0.temp'))).toEqual(new Set([45]));
    expect(new Set(values(batches, 'module0.power_limit'))).toEqual(new Set([1000]));

    // Mid-run the reasons file goes (the fake then reports sw_power_cap, 0x4, under a lowered
    // limit), the module limit and temperature change, and last the limit is lowered: a cycle that
    // reads the new limit reads all the rest new too.
    fs.rmSync(path.join(state, 'gpu0', 'clock_events'));
    setState(state, 'gpu0/module_limit', '800');
    setState(state, 'gpu0/temp', '71');
    setState(state, 'gpu0/enforced_power_limit', '250');
    await waitFor(() => values(readSpool(spool), 'gpu0.power_limit').includes(250), { what: 'the new limit', timeoutMs: 10_000 });
    await stop(agent);
    batches = readSpool(spool);
    const last = (sensor: string) => values(batches, sensor).at(-1);
    expect([last('gpu0.power_limit'), last('gpu0.clock_events'), last('module0.power_limit'), last('gpu0.temp')]).toEqual([250, 4, 800, 71]);

    // The state is read once a second, the other sensors every 100 ms cycle.
    const stateTimes = times(batches, 'gpu0.power_limit');
    stateTimes.slice(1).forEach((t, i) => expect(t - (stateTimes[i] as number)).toBeGreaterThanOrEqual(950));
    expect(times(batches, 'gpu0.power').length).toBeGreaterThanOrEqual(5 * stateTimes.length);
  }, 40_000);

  test('an older library without nvmlDeviceGetCurrentClocksEventReasons: the reasons come through the throttle-reasons call', async () => {
    const state = tempDir('erg-gpu-state-');
    setState(state, 'gpu0/clock_events', '0x20');
    const { agent, spool } = await startAgent(compile('libfake-nvml-old.so', '-DNO_CLOCK_EVENTS_CALL'), state);
    await waitFor(() => values(readSpool(spool), 'gpu0.clock_events').length >= 1, { what: 'the reasons', timeoutMs: 15_000 });
    await stop(agent);
    expect(new Set(values(readSpool(spool), 'gpu0.clock_events'))).toEqual(new Set([32]));
    const meta = JSON.parse(fs.readFileSync(path.join(spool, 'node1.meta.json'), 'utf8')) as { sources: { details: Record<string, unknown> }[] };
    expect(meta.sources[0]?.details).toMatchObject({ clockEventsCall: 'nvmlDeviceGetCurrentClocksThrottleReasons', missingFunctions: ['nvmlDeviceGetCurrentClocksEventReasons'] });
  }, 30_000);

  test('the GPU count comes from the state too: `count` 1 is one GPU', async () => {
    const state = tempDir('erg-gpu-state-');
    setState(state, 'count', '1');
    const { agent, spool } = await startAgent(compile('libfake-nvml-h100.so', '-DFAKE_H100'), state);
    await waitFor(() => readSpool(spool).length >= 1, { what: 'a batch', timeoutMs: 15_000 });
    await stop(agent);
    const sensors = readSpool(spool)[0]?.sensors?.map((s) => s.sensor) ?? [];
    expect(sensors.filter((s) => s.startsWith('gpu1.'))).toEqual([]);
    expect(sensors).toContain('gpu0.power_limit');
    expect(sensors.filter((s) => s.startsWith('module'))).toEqual([]); // H100: no module scope, no module limit
    expect(readSpool(spool)[0]?.fingerprint?.gpus.map((g) => g.index)).toEqual([0]);
  }, 30_000);
});
