import fs from 'node:fs';
import path from 'node:path';
import { decodeTelemetryValue, MAX_BATCH_MARKS, type BatchMark } from '@erg/spec';
import { waitFor } from '@erg/testkit';
import { BatchCloser, marksMember } from '../src/batch-closer';
import { nowMs } from '../src/clock';
import { createLogger } from '../src/log';
import { MARK_FUTURE_SLACK_MS, MarksTail, MarkTimeline, type MarksTailOptions } from '../src/marks-tail';
import { SampleStore } from '../src/samples';
import { Spool } from '../src/spool';
import { agentArgs, cleanupTempDirs, copyFixtures, readSpool, spawnAgent, tempDir } from './helpers';

// The agent tails <node>.marks: bounded reads, a line cut by a read kept for the next, bad lines
// skipped and counted, a batch's worth of marks at a time, each mark put on the samples' timeline
// and identified by its line's byte offset; the batches carry them.

afterAll(cleanupTempDirs);
const log = createLogger('silent');

const WALL_NS = 1_764_480_000_123_456_789n; // 2025-11-30T05:20:00.123456789Z
const WALL_MS = 1_764_480_000_123.456;
/** A timeline whose mono clock read 5 s when its wall clock read WALL_MS. */
const timeline = new MarkTimeline(WALL_MS, 5_000_000_000n);
const TEST_NOW = () => WALL_MS + 3_600_000;

const line = (kind: string, name: string, wallNs: bigint | string, monoNs: bigint | string, writer = 'py') => `${kind}\t${name}\t${wallNs}\t${monoNs}\t${writer}\n`;

function marksFile(...lines: string[]): string {
  const file = path.join(tempDir(), 'n1.marks');
  fs.writeFileSync(file, lines.join(''));
  return file;
}
const tail = (file: string, options: MarksTailOptions = {}) => new MarksTail(file, timeline, log, { now: TEST_NOW, earliestMs: WALL_MS - 3_600_000, ...options });

describe('MarkTimeline', () => {
  test('a mark with mono_ns lands on the samples\' timeline (clock mono); one without keeps its wall time (clock wall)', () => {
    // 1.5 s of CLOCK_MONOTONIC after the reading, whatever the wall clock said at the time (it stepped).
    expect(timeline.place({ kind: 'begin', name: 'a', wallNs: WALL_NS + 60_000_000_000n, monoNs: 6_500_000_000n, writer: 'py' })).toEqual({ t: WALL_MS + 1500, clock: 'mono' });
    expect(timeline.place({ kind: 'begin', name: 'a', wallNs: WALL_NS, monoNs: 4_999_999_000n, writer: 'py' })).toEqual({ t: WALL_MS - 0.001, clock: 'mono' });
    expect(timeline.place({ kind: 'step', name: 'step', wallNs: WALL_NS, monoNs: null, writer: 'sh' })).toEqual({ t: WALL_MS, clock: 'wall' });
  });

  test('now() reads both clocks together: a mark written now lands at now', () => {
    const live = MarkTimeline.now();
    const placed = live.place({ kind: 'step', name: 'step', wallNs: 0n, monoNs: process.hrtime.bigint(), writer: 'py' });
    expect(Math.abs(placed.t - nowMs())).toBeLessThan(5);
  });
});

describe('MarksTail', () => {
  test('reads marks with their byte offsets; a missing file is no marks', () => {
    const missing = tail(path.join(tempDir(), 'n1.marks'));
    expect(missing.poll()).toBe(false);
    expect(missing.fill()).toBe(true);
    expect(missing.pending).toEqual([]);

    const a = line('begin', 'train', WALL_NS, 5_000_000_000n);
    const b = line('step', 'step', WALL_NS + 2_000_000n, '-', 'sh');
    const file = marksFile(a, b);
    const marks = tail(file);
    expect(marks.poll()).toBe(true);
    expect(marks.pending).toEqual([
      { offset: 0, kind: 'begin', name: 'train', t: WALL_MS, clock: 'mono', writer: 'py' },
      { offset: Buffer.byteLength(a), kind: 'step', name: 'step', t: WALL_MS + 2, clock: 'wall', writer: 'sh' },
    ]);
    expect(marks.poll()).toBe(false); // nothing new
  });

  test('a line cut by a read is kept for the next; one still being written waits for its newline', () => {
    const a = line('begin', 'train', WALL_NS, 5_000_000_000n);
    const b = line('end', 'train', WALL_NS, 6_000_000_000n);
    const file = marksFile(a, b.slice(0, 10));
    const marks = tail(file, { readBytes: 7 }); // every line takes several reads
    marks.fill();
    expect(marks.pending.map((m) => m.offset)).toEqual([0]);
    fs.appendFileSync(file, b.slice(10));
    marks.fill();
    expect(marks.pending.map((m) => [m.offset, m.kind, m.t])).toEqual([[0, 'begin', WALL_MS], [Buffer.byteLength(a), 'end', WALL_MS + 1000]]);
    expect(marks.stats()).toMatchObject({ badLines: 0 });
  });

  test('bad lines are skipped and counted, the good ones around them kept at their own offsets', () => {
    const good = line('begin', 'train', WALL_NS, 5_000_000_000n);
    const lines = [
      'not a mark\n',
      good,
      line('start', 'train', WALL_NS, '-'), // unknown kind
      line('step', 'has space', WALL_NS, '-'),
      '\n', // blank
      `${'x'.repeat(300)}\n`, // longer than MAX_MARK_LINE_BYTES
      line('step', 'future', WALL_NS, 5_000_000_000n + BigInt(TEST_NOW() - WALL_MS + MARK_FUTURE_SLACK_MS + 1000) * 1_000_000n), // dated after it was read
      line('step', 'ancient', '1000', '-', 'sh'), // dated 1970: would cost the batch its samples
      'step\tstep\t\xff\t-\tsh\n', // not UTF-8 digits
      good,
    ];
    const file = marksFile(...lines);
    const marks = tail(file, { readBytes: 64 });
    marks.fill();
    const offsetOf = (i: number) => Buffer.byteLength(lines.slice(0, i).join(''));
    expect(marks.pending.map((m) => m.offset)).toEqual([offsetOf(1), offsetOf(9)]);
    expect(marks.stats()).toEqual({ sent: 0, badLines: 8, dropped: 2, capped: false });
  });

  test('an over-long line without its newline yet is dropped as it grows, never held whole', () => {
    const file = marksFile('y'.repeat(200));
    const marks = tail(file, { readBytes: 64 });
    marks.fill();
    fs.appendFileSync(file, `${'y'.repeat(100_000)}\n${line('end', 'train', WALL_NS, 5_000_000_000n)}`);
    marks.fill();
    expect(marks.pending.map((m) => m.offset)).toEqual([100_201]);
    expect(marks.stats().badLines).toBe(1);
  });

  test('a batch\'s worth at a time: the rest wait in the file for the next batches', () => {
    const lines = Array.from({ length: 7 }, (_, i) => line('step', 'step', WALL_NS, BigInt(5_000_000_000 + i * 1_000_000)));
    const marks = tail(marksFile(...lines), { batchMarks: 3 });
    const batches: number[][] = [];
    for (let i = 0; i < 4; i++) {
      marks.fill();
      batches.push(marks.pending.map((m) => m.offset / lines[0]!.length));
      marks.sent(marks.pending.length);
    }
    expect(batches).toEqual([[0, 1, 2], [3, 4, 5], [6], []]);
    expect(marks.stats()).toMatchObject({ sent: 7, dropped: 0 });
  });

  test('past the node\'s limit reading stops, once and for good', () => {
    const lines = Array.from({ length: 5 }, () => line('step', 'step', WALL_NS, 5_000_000_000n));
    const warnings: string[] = [];
    const marks = new MarksTail(marksFile(...lines), timeline, createLogger('warn', (l) => warnings.push(l)), { now: TEST_NOW, maxMarks: 3 });
    expect(marks.fill()).toBe(true);
    expect(marks.pending).toHaveLength(3);
    marks.sent(3);
    expect(marks.poll()).toBe(false);
    expect(marks.stats()).toEqual({ sent: 3, badLines: 0, dropped: 0, capped: true });
    expect(warnings.filter((w) => w.includes('reading stopped'))).toHaveLength(1);
  });

  test('a restarted agent reads the file again from 0: the same marks at the same offsets (ingest keeps the first copy)', () => {
    const lines = [line('begin', 'train', WALL_NS, 5_000_000_000n), line('end', 'train', WALL_NS, 7_000_000_000n), line('begin', 'eval', WALL_NS, 8_000_000_000n)];
    const file = marksFile(lines[0]!, lines[1]!);
    const first = tail(file);
    first.fill();
    first.sent(first.pending.length);
    fs.appendFileSync(file, lines[2]!);
    // A later process: its own clock reading, so `t` may differ by the reading's error; the offsets are the identity.
    const again = new MarksTail(file, new MarkTimeline(WALL_MS + 10, 5_000_000_000n + 10_000_000n), log, { now: TEST_NOW });
    again.fill();
    expect(again.pending.map((m) => [m.offset, m.name, m.t])).toEqual([
      [0, 'train', WALL_MS],
      [lines[0]!.length, 'train', WALL_MS + 2000],
      [lines[0]!.length + lines[1]!.length, 'eval', WALL_MS + 3000],
    ]);
  });

  test('a file truncated or replaced is read again from its start', () => {
    const file = marksFile(line('begin', 'train', WALL_NS, 5_000_000_000n), line('end', 'train', WALL_NS, 6_000_000_000n));
    const marks = tail(file);
    marks.fill();
    marks.sent(marks.pending.length);
    fs.rmSync(file);
    fs.writeFileSync(file, line('begin', 'eval', WALL_NS, 9_000_000_000n));
    marks.fill();
    expect(marks.pending.map((m) => [m.offset, m.name])).toEqual([[0, 'eval']]);
  });
});

describe('batches carry the marks', () => {
  function closer(dir: string, marks: MarksTail) {
    const spool = new Spool(path.join(dir, 'n1.spool'), path.join(dir, 'n1.acked'), log);
    const store = new SampleStore();
    const id = store.register({ sensor: 'gpu0.power', source: 'nvml', unit: 'W' });
    return { spool, store, id, batches: new BatchCloser('n1', store, spool, undefined, log, '', marks) };
  }

  test('the batch line holds `"marks":[…]` when there are new marks, and no member when there are none', () => {
    const dir = tempDir();
    const file = path.join(dir, 'n1.marks');
    const begin = line('begin', 'train', WALL_NS, 5_000_000_000n);
    fs.writeFileSync(file, begin);
    const marks = tail(file);
    const { spool, store, id, batches } = closer(dir, marks);
    store.push(id, WALL_MS, 300);
    marks.poll();
    expect(batches.close()).toBe(true);
    store.push(id, WALL_MS + 1, 301);
    marks.poll(); // nothing new
    batches.close();
    fs.appendFileSync(file, line('end', 'train', WALL_NS, 6_000_000_000n));
    marks.poll();
    batches.close(); // no samples: no batch, the mark waits for the next
    store.push(id, WALL_MS + 2, 302);
    batches.close();
    spool.close();
    const text = fs.readFileSync(path.join(dir, 'n1.spool'), 'utf8').split('\n');
    expect(text[0]).toContain(`,"marks":[{"offset":0,"kind":"begin","name":"train","t":${WALL_MS},"clock":"mono","writer":"py"}]}`);
    expect(text[1]).not.toContain('marks');
    const spooled = readSpool(dir, 'n1');
    expect(spooled.map((b) => b.marks?.map((m) => [m.offset, m.kind]) ?? null)).toEqual([[[0, 'begin']], null, [[begin.length, 'end']]]);
    expect(marks.stats()).toMatchObject({ sent: 2, dropped: 0 });
    // And the API takes them as they are.
    const bounds = { minT: WALL_MS - 60_000, maxT: WALL_MS + 60_000 };
    expect(spooled.map((b) => decodeTelemetryValue(b, bounds).ok)).toEqual([true, true, true]);
  });

  test('a batch the spool could not take leaves its marks pending for the next', () => {
    const dir = tempDir();
    const file = path.join(dir, 'n1.marks');
    fs.writeFileSync(file, line('begin', 'train', WALL_NS, 5_000_000_000n));
    const marks = tail(file);
    const { spool, store, id, batches } = closer(dir, marks);
    const append = spool.append.bind(spool);
    spool.append = () => {
      throw new Error('ENOSPC: no space left on device');
    };
    store.push(id, WALL_MS, 300);
    marks.poll();
    expect(batches.close()).toBe(false);
    spool.append = append;
    store.push(id, WALL_MS + 1, 301);
    batches.close();
    spool.close();
    expect(readSpool(dir, 'n1').map((b) => b.marks?.length)).toEqual([1]);
  });

  test(`a full batch of marks (${MAX_BATCH_MARKS}) is a line the API takes`, () => {
    const marks: BatchMark[] = Array.from({ length: MAX_BATCH_MARKS }, (_, i) => ({ offset: i * 40, kind: 'step', name: 'step', t: WALL_MS + i, clock: 'mono', writer: 'py' }));
    const text = `{"node":"n1","seq":0,"samples":[{"sensor":"gpu0.power","t":[${WALL_MS}],"v":[1]}]${marksMember(marks)}}`;
    const decoded = decodeTelemetryValue(JSON.parse(text), { minT: WALL_MS - 1, maxT: WALL_MS + MAX_BATCH_MARKS });
    expect(decoded.ok && decoded.batch.marks?.length).toBe(MAX_BATCH_MARKS);
  });
});

describe('the agent process', () => {
  test('marks written while it runs travel in its batches; on stop the last batches carry every mark written until then', async () => {
    const spool = tempDir();
    const file = path.join(spool, 'node1.marks');
    // Shell-style (wall) and Python-style (mono) marks, as the writers append them.
    const writeMark = (kind: string, name: string) => {
      const wall = BigInt(Date.now()) * 1_000_000n;
      fs.appendFileSync(file, kind === 'step' ? line(kind, name, wall, '-', 'sh') : line(kind, name, wall, process.hrtime.bigint()));
    };
    const agent = await spawnAgent(agentArgs(spool, copyFixtures('gh200'), ['--interval-ms', '50', '--batch-ms', '200']));
    await waitFor(() => fs.existsSync(path.join(spool, 'node1.ready')), { what: 'the agent sampling', timeoutMs: 15_000 });
    writeMark('begin', 'train');
    fs.appendFileSync(file, 'garbage\n');
    for (let i = 0; i < 5; i++) writeMark('step', 'step');
    // While it runs, the batches closed next carry them.
    await waitFor(() => readSpool(spool).flatMap((b) => b.marks ?? []).length === 6, { what: 'the 6 marks spooled', timeoutMs: 15_000 });
    // 25,000 marks right before the stop: more than two batches' worth, all read at the end.
    const many = Array.from({ length: 25_000 }, () => line('step', 'step', BigInt(Date.now()) * 1_000_000n, process.hrtime.bigint())).join('');
    fs.appendFileSync(file, many);
    writeMark('end', 'train');
    agent.child.kill('SIGTERM');
    expect((await agent.exited).code).toBe(0);

    const batches = readSpool(spool);
    const marks = batches.flatMap((b) => b.marks ?? []);
    expect(marks).toHaveLength(25_007);
    expect(new Set(marks.map((m) => m.offset)).size).toBe(25_007);
    expect(marks[0]).toMatchObject({ offset: 0, kind: 'begin', name: 'train', clock: 'mono', writer: 'py' });
    expect(marks[1]).toMatchObject({ kind: 'step', clock: 'wall', writer: 'sh' });
    expect(marks[marks.length - 1]).toMatchObject({ kind: 'end', name: 'train' });
    expect(Math.max(...batches.map((b) => b.marks?.length ?? 0))).toBe(MAX_BATCH_MARKS);
    // On the samples' timeline: between the agent's first and last sample.
    const sampleTimes = batches.flatMap((b) => b.samples.flatMap((c) => c.t));
    for (const m of [marks[0]!, marks[marks.length - 1]!]) {
      expect(m.t).toBeGreaterThan(Math.min(...sampleTimes));
      expect(m.t).toBeLessThan(Math.max(...sampleTimes) + 100);
    }
    const stats = JSON.parse(fs.readFileSync(path.join(spool, 'node1.stats.json'), 'utf8'));
    expect(stats).toMatchObject({ marksSent: 25_007, marksBadLines: 1, marksDropped: 0, marksCapped: false });
  }, 30_000);
});
