import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { waitFor } from '@erg/testkit';
import { createLogger } from '../src/log';
import { detectSources } from '../src/sources';
import { detectDcgm } from '../src/sources/dcgm';
import { DCGM_FIELDS, parseDmonHeader, parseDmonOutput, parseDmonRow } from '../src/sources/dcgmi-dmon';
import type { Source } from '../src/sources/types';
import { cleanupTempDirs, configFrom, detectContext, FIXTURES, recordingSink, tempDir } from './helpers';

// gcc builds the fake NVML and detection probes the counters' update period (up to 0.8 s per
// detect), or runs the fake dcgmi: seconds on a loaded 2-core machine, more than Jest's 5 s default.
jest.setTimeout(30_000);

// DCGM's profiling fields through `dcgmi dmon`, against a FAKE dcgmi (test/fixtures/dcgm) that
// prints recorded-format tables with invented values: no DCGM exists where these tests run.

const FAKE = path.join(FIXTURES, 'dcgm', 'dcgmi');
const RECORDED = fs.readFileSync(path.join(FIXTURES, 'dcgm', 'recorded.txt'), 'utf8');
const started: Source[] = [];
const detect = (ctx = detectContext({ dcgmi: FAKE, 'interval-ms': 100 })): Source | null => {
  const source = detectDcgm(ctx);
  if (source) started.push(source);
  return source;
};
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
});
/** The fake with some of its environment variables set (a wrapper script: Jest's process.env does not reach children). */
const fakeWith = (env: Record<string, string>): string => {
  const wrapper = path.join(tempDir(), 'dcgmi');
  const vars = Object.entries(env).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ');
  fs.writeFileSync(wrapper, `#!/usr/bin/env bash\n${vars} exec ${JSON.stringify(FAKE)} "$@"\n`, { mode: 0o755 });
  return wrapper;
};
afterAll(cleanupTempDirs);

describe('dcgmi dmon output', () => {
  test('a row is cut at the header\'s column starts: N/A and blank cells are no value', () => {
    const [header, , ...rows] = RECORDED.split('\n');
    const h = parseDmonHeader(header!)!;
    expect(h.names).toEqual(['PCITX', 'PCIRX', 'NVLTX', 'NVLRX', 'C2CTXAB', 'C2CRXAB']);
    expect(h.starts).toEqual([16, 44, 72, 100, 128, 156]);
    expect(parseDmonRow(rows[0]!, h)).toEqual({ gpu: 0, values: Array(6).fill(Number.NaN) });
    expect(parseDmonRow(rows[2]!, h)).toEqual({ gpu: 0, values: [1200023757, 3400047514, 52071271, 48095028, 45000118785, 61000142542] });
    // A field an entity has no value for is printed as blanks: the columns after it stay where they are.
    const blank = `${'GPU 3'.padEnd(16)}${''.padEnd(28)}${'77'.padEnd(28)}`;
    expect(parseDmonRow(blank, h)?.values.slice(0, 2)).toEqual([Number.NaN, 77]);
    expect(parseDmonRow('ID', h)).toBeNull();
    expect(parseDmonRow('Error: unable to establish a connection to the specified host: localhost', h)).toBeNull();
  });

  test('a whole answer: the header again every 14 samples, rows by column name', () => {
    const out = parseDmonOutput(RECORDED);
    expect(out.tables).toBe(2);
    expect(out.rows).toHaveLength(32);
    expect(out.rows.at(-1)).toMatchObject({ gpu: 1, values: { PCITX: expect.any(Number), C2CRXAB: expect.any(Number) } });
  });

  test('the fields are DCGM\'s profiling byte rates of PCIe, NVLink and C2C (header and payload)', () => {
    expect(DCGM_FIELDS.map((f) => [f.id, f.quantity])).toEqual([
      [1009, 'pcie_tx'], [1010, 'pcie_rx'], [1011, 'nvlink_tx'], [1012, 'nvlink_rx'], [1076, 'c2c_tx'], [1078, 'c2c_rx'],
    ]);
  });
});

describe('dcgm source (fake dcgmi)', () => {
  test('probes a few samples, then one long-running `dcgmi dmon -d <ms>`; every value in B/s, scope gpu', async () => {
    const log = path.join(tempDir(), 'dcgmi.log');
    const source = detect(detectContext({ dcgmi: fakeWith({ FAKE_DCGMI_LOG: log }), 'interval-ms': 100 }));
    const quantities = ['pcie_tx', 'pcie_rx', 'nvlink_tx', 'nvlink_rx', 'c2c_tx', 'c2c_rx'];
    expect(source?.sensors).toEqual([0, 1].flatMap((gpu) => quantities.map((q) => ({ sensor: `gpu${gpu}.${q}`, source: 'dcgm', unit: 'B/s', scope: 'gpu' }))));
    expect(source?.details).toMatchObject({ fields: '1009,1010,1011,1012,1076,1078', delayMs: 100, gpus: [0, 1] });
    const sink = recordingSink();
    const names = source?.sensors.map((s) => s.sensor) ?? [];
    let t = 0;
    await waitFor(
      () => {
        source?.read((t += 100), sink);
        return sink.samples.filter((s) => names[s.local] === 'gpu1.c2c_rx').length >= 3;
      },
      { timeoutMs: 10_000, intervalMs: 50, what: 'three samples of the fake dcgmi' },
    );
    // Each cycle takes the newest row that arrived since the previous one: which rows a cycle sees
    // depends on timing (a loaded machine's cycle can come after two rows), what it takes does not.
    // The recorded rows' values, as B/s, of the right GPU and field; N/A rows push nothing; each
    // row's values together (one row's line is parsed at once); each value once.
    const header = parseDmonHeader(RECORDED.split('\n')[0]!)!;
    const recorded = fs.readFileSync(path.join(FIXTURES, 'dcgm', 'rows.txt'), 'utf8').split('\n').map((l) => parseDmonRow(l, header)).filter((r) => r !== null);
    const column = (gpu: number, field: string) => recorded.filter((r) => r.gpu === gpu).map((r) => r.values[header.names.indexOf(field)]!);
    const taken = (sensor: string) => sink.samples.filter((s) => names[s.local] === sensor);
    const pcieTx = column(0, 'PCITX');
    const c2cTx = column(0, 'C2CTXAB');
    expect(pcieTx.slice(0, 2)).toEqual([Number.NaN, 1200023757]);
    const tx = taken('gpu0.pcie_tx');
    expect(tx.length).toBeGreaterThanOrEqual(1);
    for (const s of tx) expect(pcieTx.slice(1)).toContain(s.v);
    expect(new Set(tx.map((s) => s.t)).size).toBe(tx.length);
    expect(new Set(tx.map((s) => s.v)).size).toBe(tx.length);
    // The same cycle's C2C value of GPU 0 comes from the same row as its PCIe value.
    const c2cAt = new Map(taken('gpu0.c2c_tx').map((s) => [s.t, s.v]));
    for (const s of tx) expect(c2cAt.get(s.t)).toBe(c2cTx[pcieTx.indexOf(s.v)]);
    const rx1 = taken('gpu1.pcie_rx');
    const pcieRx1 = column(1, 'PCIRX').slice(1);
    expect(rx1.length).toBeGreaterThanOrEqual(1);
    for (const s of rx1) expect(pcieRx1).toContain(s.v);
    const pid = (source?.stats?.() as { pid: number }).pid;
    expect(pid).toBeGreaterThan(0);
    await source?.stop();
    started.splice(0);
    expect(fs.readFileSync(log, 'utf8').trim().split('\n')).toEqual([
      'dmon -e 1009,1010,1011,1012,1076,1078 -c 3 -d 200',
      'dmon -e 1009,1010,1011,1012,1076,1078 -d 100',
    ]);
  });

  test('a discrete GPU\'s C2C columns are N/A: no C2C sensors, and a note per field', () => {
    const ctx = detectContext({ dcgmi: fakeWith({ FAKE_DCGMI_H100: '1' }), 'interval-ms': 100 });
    const source = detect(ctx);
    expect(source?.sensors.map((s) => s.sensor)).toEqual(['gpu0.pcie_tx', 'gpu0.pcie_rx', 'gpu0.nvlink_tx', 'gpu0.nvlink_rx', 'gpu1.pcie_tx', 'gpu1.pcie_rx', 'gpu1.nvlink_tx', 'gpu1.nvlink_rx']);
    expect(ctx.notes).toEqual(['field 1076 (C2CTXAB): no value on any GPU (needs driver ≥ 575 / DCGM ≥ 4.1, and a C2C GPU)', 'field 1078 (C2CRXAB): no value on any GPU (needs driver ≥ 575 / DCGM ≥ 4.1, and a C2C GPU)']);
  });

  test('absent, with the reason: no dcgmi, or no host engine', () => {
    const none = detectContext({ dcgmi: '/nonexistent/dcgmi' });
    expect(detect(none)).toBeNull();
    expect(none.notes).toEqual(['/nonexistent/dcgmi not found (DCGM not installed)']);
    const bin = fakeWith({ FAKE_DCGMI_NO_HOSTENGINE: '1' });
    const down = detectContext({ dcgmi: bin });
    expect(detect(down)).toBeNull();
    expect(down.notes).toEqual([`${bin} dmon failed: Error: unable to establish a connection to the specified host: localhost`]);
  });

  test('detected before NVML, which then leaves the link traffic to DCGM (nothing shadowed)', async () => {
    const lib = path.join(tempDir('erg-fake-nvml-'), 'libfake-nvml.so');
    execFileSync('gcc', ['-shared', '-fPIC', '-O1', '-o', lib, path.join(FIXTURES, 'fake-nvml', 'fake_nvml.c')]);
    const config = configFrom({ 'nvml-lib': lib, dcgmi: FAKE, 'sysfs-root': tempDir(), 'procfs-root': path.join(FIXTURES, 'procfs'), 'interval-ms': 100 });
    const d = detectSources(config, createLogger('silent'), () => {});
    try {
      expect(d.active.map((a) => a.source.name)).toEqual(['dcgm', 'nvml', 'procfs']);
      expect(d.shadowed).toEqual([]);
      const nvml = d.active.find((a) => a.source.name === 'nvml')!.source;
      expect(nvml.sensors.map((s) => s.sensor).filter((n) => /\.(pcie|nvlink|c2c)_/.test(n))).toEqual([]);
      expect(d.active[0]!.source.sensors).toHaveLength(12);
    } finally {
      await Promise.all(d.active.map((a) => a.source.stop()));
    }
  });
});
