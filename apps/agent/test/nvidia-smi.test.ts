import fs from 'node:fs';
import path from 'node:path';
import { waitFor } from '@erg/testkit';
import { detectNvidiaSmi, parseNvidiaSmiLine } from '../src/sources/nvidia-smi';
import { cleanupTempDirs, detectContext, FIXTURES, recordingSink, tempDir } from './helpers';

// Against a fake nvidia-smi (test/fixtures/nvidia-smi) that replays recorded-format CSV output.

const FAKE = path.join(FIXTURES, 'nvidia-smi', 'nvidia-smi');
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
    expect(parseNvidiaSmiLine('garbage', 5)).toBeNull();
    expect(parseNvidiaSmiLine('0, 1, 2', 5)).toBeNull();
  });

  test('one long-running child; sensors from the first answer; W, %, MHz and MiB→B; killed on stop', async () => {
    const ctx = detectContext({ 'nvidia-smi': FAKE, 'interval-ms': 50 });
    const source = detectNvidiaSmi(ctx);
    expect(source?.sensors).toEqual([
      { sensor: 'gpu0.power', source: 'nvidia-smi', unit: 'W', scope: 'gpu' },
      { sensor: 'module0.power', source: 'nvidia-smi', unit: 'W', scope: 'module' },
      { sensor: 'gpu0.util', source: 'nvidia-smi', unit: '%', scope: 'gpu' },
      { sensor: 'gpu0.clock', source: 'nvidia-smi', unit: 'MHz', scope: 'gpu' },
      { sensor: 'gpu0.mem_used', source: 'nvidia-smi', unit: 'B', scope: 'gpu' },
      // GPU 1 reports [N/A] module power: no module1.power sensor
      { sensor: 'gpu1.power', source: 'nvidia-smi', unit: 'W', scope: 'gpu' },
      { sensor: 'gpu1.util', source: 'nvidia-smi', unit: '%', scope: 'gpu' },
      { sensor: 'gpu1.clock', source: 'nvidia-smi', unit: 'MHz', scope: 'gpu' },
      { sensor: 'gpu1.mem_used', source: 'nvidia-smi', unit: 'B', scope: 'gpu' },
    ]);
    expect(source?.details).toMatchObject({ query: '--query-gpu=index,power.draw.instant,module.power.draw.instant,utilization.gpu,clocks.sm,memory.used', loopMs: 50 });
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
    // A cycle records only what arrived since the last one: no value is repeated from an old line.
    const before = sink.samples.length;
    source?.read((t += 1), sink);
    source?.read((t += 1), sink);
    expect(sink.samples.length - before).toBeLessThanOrEqual(names.length);
    const pid = (source?.stats?.() as { pid: number }).pid;
    expect(alive(pid)).toBe(true);
    await source?.stop();
    expect(alive(pid)).toBe(false);
  });

  test('falls back to the older field names when the driver rejects *.instant', async () => {
    // The fake reads FAKE_NVIDIA_SMI_OLD_DRIVER from its environment; a wrapper script sets it.
    const dir = tempDir();
    const wrapper = path.join(dir, 'nvidia-smi');
    fs.writeFileSync(wrapper, `#!/usr/bin/env bash\nFAKE_NVIDIA_SMI_OLD_DRIVER=1 exec ${JSON.stringify(FAKE)} "$@"\n`, { mode: 0o755 });
    const source = detectNvidiaSmi(detectContext({ 'nvidia-smi': wrapper, 'interval-ms': 50 }));
    expect(source?.details.query).toBe('--query-gpu=index,power.draw,utilization.gpu,clocks.sm,memory.used');
    expect(source?.sensors.map((s) => s.sensor)).toEqual(['gpu0.power', 'gpu0.util', 'gpu0.clock', 'gpu0.mem_used', 'gpu1.power', 'gpu1.util', 'gpu1.clock', 'gpu1.mem_used']);
    await source?.stop();
  });

  test('absent when the binary does not exist (child_process is not even loaded for that)', () => {
    const ctx = detectContext({ 'nvidia-smi': '/nonexistent/nvidia-smi' });
    expect(detectNvidiaSmi(ctx)).toBeNull();
    expect(ctx.notes).toEqual(['/nonexistent/nvidia-smi not found']);
  });
});
