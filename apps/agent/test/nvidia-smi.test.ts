import fs from 'node:fs';
import path from 'node:path';
import { waitFor } from '@erg/testkit';
import { detectNvidiaSmi, parseIdentity, parseNvidiaSmiLine } from '../src/sources/nvidia-smi';
import type { Source } from '../src/sources/types';
import { cleanupTempDirs, detectContext, FIXTURES, recordingSink, tempDir } from './helpers';

// Against a fake nvidia-smi (test/fixtures/nvidia-smi) that replays recorded-format CSV output.

const FAKE = path.join(FIXTURES, 'nvidia-smi', 'nvidia-smi');
/** Every source a test started, stopped after it even when it failed (each holds a child). */
const started: Source[] = [];
const detect = (options: Record<string, string | number>, ctx = detectContext(options)): Source | null => {
  const source = detectNvidiaSmi(ctx);
  if (source) started.push(source);
  return source;
};
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
});
afterAll(cleanupTempDirs);

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('nvidia-smi source (fake nvidia-smi)', () => {
  test('parses CSV lines; [N/A] and [Not Supported] are no value', () => {
    expect(parseNvidiaSmiLine('0, 312.45, 498.12, 87, 1980, 45012', 5)).toEqual({ gpu: 0, values: [312.45, 498.12, 87, 1980, 45012] });
    const na = parseNvidiaSmiLine('1, [N/A], [Not Supported], 81, 1980, 44980', 5);
    expect(na?.values.slice(0, 2)).toEqual([Number.NaN, Number.NaN]);
    // The clocks-event reasons come as a hex bitmask.
    expect(parseNvidiaSmiLine('0, 0x0000000000000004, 0x0000000000000000, [Not Supported]', 3)?.values).toEqual([4, 0, Number.NaN]);
    expect(parseNvidiaSmiLine('garbage', 5)).toBeNull();
    expect(parseNvidiaSmiLine('0, 1, 2', 5)).toBeNull();
  });

  test('one long-running child; sensors from the first answer; W, %, MHz and MiB→B; killed on stop', async () => {
    const ctx = detectContext({ 'nvidia-smi': FAKE, 'interval-ms': 50 });
    const source = detect({}, ctx);
    expect(source?.sensors).toEqual([
      { sensor: 'gpu0.power', source: 'nvidia-smi', unit: 'W', scope: 'gpu' },
      { sensor: 'module0.power', source: 'nvidia-smi', unit: 'W', scope: 'module' },
      { sensor: 'gpu0.util', source: 'nvidia-smi', unit: '%', scope: 'gpu' },
      { sensor: 'gpu0.clock', source: 'nvidia-smi', unit: 'MHz', scope: 'gpu' },
      { sensor: 'gpu0.mem_used', source: 'nvidia-smi', unit: 'B', scope: 'gpu' },
      { sensor: 'gpu0.power_limit', source: 'nvidia-smi', unit: 'W', scope: 'gpu' },
      { sensor: 'gpu0.clock_app', source: 'nvidia-smi', unit: 'MHz', scope: 'gpu' },
      { sensor: 'gpu0.temp', source: 'nvidia-smi', unit: '°C', scope: 'gpu' },
      { sensor: 'gpu0.clock_events', source: 'nvidia-smi', unit: 'bitmask', scope: 'gpu' },
      // GPU 1 reports [N/A] module power and applications clock: no module1.power, no gpu1.clock_app
      { sensor: 'gpu1.power', source: 'nvidia-smi', unit: 'W', scope: 'gpu' },
      { sensor: 'gpu1.util', source: 'nvidia-smi', unit: '%', scope: 'gpu' },
      { sensor: 'gpu1.clock', source: 'nvidia-smi', unit: 'MHz', scope: 'gpu' },
      { sensor: 'gpu1.mem_used', source: 'nvidia-smi', unit: 'B', scope: 'gpu' },
      { sensor: 'gpu1.power_limit', source: 'nvidia-smi', unit: 'W', scope: 'gpu' },
      { sensor: 'gpu1.temp', source: 'nvidia-smi', unit: '°C', scope: 'gpu' },
      { sensor: 'gpu1.clock_events', source: 'nvidia-smi', unit: 'bitmask', scope: 'gpu' },
    ]);
    expect(source?.details).toMatchObject({
      query: '--query-gpu=index,power.draw.instant,module.power.draw.instant,utilization.gpu,clocks.sm,memory.used,enforced.power.limit,clocks.applications.graphics,temperature.gpu,clocks_event_reasons.active',
      loopMs: 50,
    });
    expect(ctx.notes).toEqual([]);
    const sink = recordingSink();
    const names = source?.sensors.map((s) => s.sensor) ?? [];
    const seen = (sensor: string) => sink.samples.filter((s) => names[s.local] === sensor).map((s) => s.v);
    let t = 0;
    await waitFor(
      () => {
        source?.read((t += 1), sink);
        return seen('gpu0.util').length >= 5;
      },
      { timeoutMs: 10_000, intervalMs: 40, what: 'five loops of the fake nvidia-smi' },
    );
    expect(new Set(seen('gpu0.util'))).toEqual(new Set([87, 88, 86, 90]));
    expect(seen('gpu0.mem_used')).toContain(45012 * 1024 * 1024);
    // The loop where GPU 0's power is [N/A] records no gpu0.power (not 0) but its other fields.
    expect(seen('gpu0.power').every((v) => [312.45, 315.8, 318.2].includes(v))).toBe(true);
    expect(seen('module0.power').length).toBeGreaterThan(0);
    // The state in force; the reasons' hex bitmask as a number, `[Not Supported]` recorded as nothing.
    expect(new Set(seen('gpu0.power_limit'))).toEqual(new Set([320]));
    expect(new Set(seen('gpu1.power_limit'))).toEqual(new Set([900]));
    expect(new Set(seen('gpu0.clock_app'))).toEqual(new Set([1980]));
    expect(seen('gpu0.temp').every((v) => [52, 53, 54].includes(v))).toBe(true);
    expect(seen('gpu0.clock_events').every((v) => [0, 4].includes(v))).toBe(true);
    // …taken at most once a second (cycle times here are 1, 2, 3, … ms: only the first cycle's).
    expect(seen('gpu0.power_limit')).toHaveLength(1);
    expect(seen('gpu0.util').length).toBeGreaterThanOrEqual(5);
    // A cycle records only what arrived since the last one: no value is repeated from an old line.
    const before = sink.samples.length;
    source?.read((t += 1), sink);
    source?.read((t += 1), sink);
    expect(sink.samples.length - before).toBeLessThanOrEqual(names.length);
    // A cycle a second later takes the newest state values.
    await waitFor(
      () => {
        source?.read((t += 1000), sink);
        return seen('gpu1.temp').length >= 2;
      },
      { timeoutMs: 10_000, intervalMs: 40, what: 'a second state reading' },
    );
    const pid = (source?.stats?.() as { pid: number }).pid;
    expect(alive(pid)).toBe(true);
    await source?.stop();
    expect(alive(pid)).toBe(false);
  });

  test('an older driver: each field it rejects is asked for by its older name (power.draw, clocks_throttle_reasons.active) or left out', async () => {
    // The fake reads FAKE_NVIDIA_SMI_OLD_DRIVER from its environment; a wrapper script sets it.
    const dir = tempDir();
    const wrapper = path.join(dir, 'nvidia-smi');
    fs.writeFileSync(wrapper, `#!/usr/bin/env bash\nFAKE_NVIDIA_SMI_OLD_DRIVER=1 exec ${JSON.stringify(FAKE)} "$@"\n`, { mode: 0o755 });
    const ctx = detectContext({ 'nvidia-smi': wrapper, 'interval-ms': 50 });
    const source = detect({}, ctx);
    expect(source?.details.query).toBe('--query-gpu=index,power.draw,utilization.gpu,clocks.sm,memory.used,enforced.power.limit,clocks.applications.graphics,temperature.gpu,clocks_throttle_reasons.active');
    expect(ctx.notes).toEqual([
      'power.draw.instant unknown to this driver: power.draw instead',
      'module.power.draw.instant unknown to this driver: left out',
      'clocks_event_reasons.active unknown to this driver: clocks_throttle_reasons.active instead',
    ]);
    expect(source?.sensors.map((s) => s.sensor)).toEqual([
      'gpu0.power', 'gpu0.util', 'gpu0.clock', 'gpu0.mem_used', 'gpu0.power_limit', 'gpu0.clock_app', 'gpu0.temp', 'gpu0.clock_events',
      'gpu1.power', 'gpu1.util', 'gpu1.clock', 'gpu1.mem_used', 'gpu1.power_limit', 'gpu1.temp', 'gpu1.clock_events',
    ]);
    const sink = recordingSink();
    const names = source?.sensors.map((s) => s.sensor) ?? [];
    await waitFor(
      () => {
        source?.read(Date.now(), sink);
        return sink.samples.some((s) => names[s.local] === 'gpu0.clock_events');
      },
      { timeoutMs: 10_000, intervalMs: 40, what: 'a loop with the reasons' },
    );
    expect(sink.samples.find((s) => names[s.local] === 'gpu0.clock_events')?.v).toBe(0);
    await source?.stop();
  });

  test('names the GPUs for the fingerprint: names, UUIDs, VBIOS and the driver, from one identity query', async () => {
    const source = detect({ 'nvidia-smi': FAKE, 'interval-ms': 50 });
    expect(source?.identity?.()).toEqual({
      driverVersion: '550.54.15',
      cudaVersion: null,
      nvmlVersion: null,
      gpus: [
        { index: 0, name: 'NVIDIA GH200 480GB', uuid: 'GPU-fa4e0c1d-0000-4a5b-8c6d-000000000000', vbios: '96.00.9F.00.01' },
        { index: 1, name: 'NVIDIA GH200 480GB', uuid: 'GPU-fa4e0c1d-0000-4a5b-8c6d-000000000001', vbios: '96.00.9F.00.01' },
      ],
    });
    await source?.stop();
    // A name with a comma stays whole; [N/A] is no value.
    expect(parseIdentity('3, Some GPU, rev B, GPU-x, [N/A], 535.1\n').gpus).toEqual([{ index: 3, name: 'Some GPU, rev B', uuid: 'GPU-x', vbios: null }]);
  });

  test('absent when the binary does not exist (child_process is not even loaded for that)', () => {
    const ctx = detectContext({ 'nvidia-smi': '/nonexistent/nvidia-smi' });
    expect(detectNvidiaSmi(ctx)).toBeNull();
    expect(ctx.notes).toEqual(['/nonexistent/nvidia-smi not found']);
  });
});
