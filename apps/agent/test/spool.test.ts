import fs from 'node:fs';
import path from 'node:path';
import { createLogger } from '../src/log';
import { readAcked, Spool } from '../src/spool';
import { cleanupTempDirs, tempDir } from './helpers';

afterAll(cleanupTempDirs);
const log = createLogger('silent');
const line = (seq: number) => JSON.stringify({ node: 'n1', seq, samples: [{ sensor: 'cpu0.util', t: [seq], v: [1] }] });

describe('Spool', () => {
  test('a new spool starts at seq 0; appends one line per batch and reads any line back', () => {
    const dir = tempDir();
    const spool = new Spool(path.join(dir, 'n1.spool'), path.join(dir, 'n1.acked'), log);
    expect(spool.recovery).toEqual({ nextSeq: 0, ackedSeq: -1, unacked: [], existing: 0, truncatedBytes: 0 });
    const a = spool.append(0, line(0));
    const b = spool.append(1, line(1));
    expect(spool.readLine(b).toString()).toBe(line(1));
    expect(spool.readLine(a).toString()).toBe(line(0));
    spool.close();
    expect(fs.readFileSync(path.join(dir, 'n1.spool'), 'utf8')).toBe(`${line(0)}\n${line(1)}\n`);
  });

  test('fsyncs at most once a second while appending, and on sync()', () => {
    const dir = tempDir();
    let now = 10_000;
    const spool = new Spool(path.join(dir, 'n1.spool'), path.join(dir, 'n1.acked'), log, () => now);
    spool.append(0, line(0)); // first append: due (never synced)
    spool.append(1, line(1));
    now += 500;
    spool.append(2, line(2));
    expect(spool.fsyncs).toBe(1);
    now += 600;
    spool.syncIfDue();
    expect(spool.fsyncs).toBe(2);
    spool.syncIfDue(); // nothing new: no fsync
    spool.append(3, line(3));
    spool.sync();
    expect(spool.fsyncs).toBe(3);
    spool.close();
  });

  test('reopened: continues after the last seq; batches above .acked are to be resent', () => {
    const dir = tempDir();
    const file = path.join(dir, 'n1.spool');
    const acked = path.join(dir, 'n1.acked');
    const first = new Spool(file, acked, log);
    for (let s = 0; s < 5; s += 1) first.append(s, line(s));
    first.writeAcked(2);
    first.writeAcked(1); // never moves back
    first.close();
    expect(readAcked(acked)).toBe(2);
    const again = new Spool(file, acked, log);
    expect(again.recovery.nextSeq).toBe(5);
    expect(again.recovery.existing).toBe(5);
    expect(again.recovery.unacked.map((b) => b.seq)).toEqual([3, 4]);
    expect(again.readLine(again.recovery.unacked[0]!).toString()).toBe(line(3));
    again.close();
  });

  test('a torn last line (crash mid-write) is cut off; a last line that does not parse too', () => {
    const dir = tempDir();
    const file = path.join(dir, 'n1.spool');
    fs.writeFileSync(file, `${line(0)}\n${line(1)}\n{"node":"n1","seq":2,"samp`);
    const s1 = new Spool(file, path.join(dir, 'n1.acked'), log);
    expect(s1.recovery).toMatchObject({ nextSeq: 2, existing: 2, truncatedBytes: 26 });
    s1.append(2, line(2));
    s1.close();
    expect(fs.readFileSync(file, 'utf8')).toBe(`${line(0)}\n${line(1)}\n${line(2)}\n`);
    fs.appendFileSync(file, '{"node":"n1","seq":3,"samples":[\n');
    const s2 = new Spool(file, path.join(dir, 'n1.acked'), log);
    expect(s2.recovery).toMatchObject({ nextSeq: 3, existing: 3 });
    s2.close();
  });

  test('.acked is replaced atomically (tmp + rename) and a bad one counts as nothing acknowledged', () => {
    const dir = tempDir();
    const acked = path.join(dir, 'n1.acked');
    const spool = new Spool(path.join(dir, 'n1.spool'), acked, log);
    const inode = () => fs.statSync(acked).ino;
    spool.writeAcked(0);
    const before = inode();
    spool.writeAcked(7);
    expect(fs.readFileSync(acked, 'utf8')).toBe('7\n');
    expect(inode()).not.toBe(before);
    expect(fs.readdirSync(dir).filter((f) => f.includes('.tmp'))).toEqual([]);
    spool.close();
    fs.writeFileSync(acked, 'garbage');
    expect(readAcked(acked)).toBe(-1);
    expect(readAcked(path.join(dir, 'missing'))).toBe(-1);
  });

  test('indexes a large spool in chunks', () => {
    const dir = tempDir();
    const file = path.join(dir, 'n1.spool');
    const big = (seq: number) => JSON.stringify({ node: 'n1', seq, samples: [{ sensor: 'x0.power', t: Array.from({ length: 5000 }, (_, i) => i), v: Array.from({ length: 5000 }, () => 1.5) }] });
    fs.writeFileSync(file, Array.from({ length: 60 }, (_, s) => `${big(s)}\n`).join('')); // ~3 MB: several 1 MiB chunks
    const spool = new Spool(file, path.join(dir, 'n1.acked'), log);
    expect(spool.recovery.nextSeq).toBe(60);
    expect(spool.recovery.unacked).toHaveLength(60);
    expect(JSON.parse(spool.readLine(spool.recovery.unacked[41]!).toString()).seq).toBe(41);
    spool.close();
  });
});
