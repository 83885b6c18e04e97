import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { runFiguresOf } from '@erg/results/run-figures';
import {
  BUNDLE_FILES, bundleStream, EvidenceBundle, numberText, openEvidenceBundle, parseExact, parseNumber, parseSamplesCsv, runFile, samplesCsv, samplesFile, stringifyExact,
  verifyBundle, type BundleMembers,
} from '../src';
import { syntheticSource } from './synthetic-source';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'erg-evidence-test-'));
  dirs.push(d);
  return d;
}

/** The synthetic campaign's bundle, written to a file. */
async function writtenBundle(): Promise<{ file: string; source: ReturnType<typeof syntheticSource> }> {
  const source = syntheticSource();
  const file = path.join(tempDir(), 'bundle.tar');
  await pipeline(bundleStream(source, { now: new Date('2026-11-30T12:00:00Z') }), createWriteStream(file));
  return { file, source };
}

/** The members with one member's bytes replaced; `rehash`: its sha256 in the manifest too (a bundle altered with care). */
function altered(members: BundleMembers, file: string, change: (data: Buffer) => Buffer, rehash: boolean): BundleMembers {
  const out: BundleMembers = new Map(members);
  const data = change(members.get(file)!.data!);
  const sha256 = createHash('sha256').update(data).digest('hex');
  out.set(file, { sha256, bytes: data.length, data });
  if (rehash) {
    const manifest = JSON.parse(members.get(BUNDLE_FILES.manifest)!.data!.toString('utf8'));
    for (const f of manifest.files) if (f.path === file) Object.assign(f, { sha256, bytes: data.length });
    const text = Buffer.from(JSON.stringify(manifest));
    out.set(BUNDLE_FILES.manifest, { sha256: '', bytes: text.length, data: text });
  }
  return out;
}

describe('exact JSON', () => {
  test('gives back what JSON cannot hold: Maps, bigints, Dates, -0, NaN, ±Infinity, and objects of the data with a "$erg" key', () => {
    const value = {
      map: new Map<string, unknown>([['a', [1, -0]], ['b', new Map([['c', 2n]])]]), big: 2n ** 70n, at: new Date('2026-11-30T12:00:00.123Z'),
      numbers: [-0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0.1 + 0.2, 5e-324],
      own: { $erg: 'Map', v: [] }, nested: { $erg: { $erg: 'number', v: '-0' } },
    };
    const back = parseExact(stringifyExact(value)) as typeof value;
    expect(back.map).toEqual(value.map);
    expect(back.big).toBe(value.big);
    expect(back.at).toEqual(value.at);
    expect(back.numbers.map((n) => Object.is(n, -0) ? '-0' : String(n))).toEqual(['-0', 'NaN', 'Infinity', '-Infinity', String(0.1 + 0.2), '5e-324']);
    expect(back.own).toEqual({ $erg: 'Map', v: [] });
    expect(back.nested).toEqual({ $erg: { $erg: 'number', v: '-0' } });
    expect(JSON.parse(stringifyExact(value))).toBeInstanceOf(Object); // plain JSON to any reader
  });

  test('gives back any JSON-like value of doubles exactly', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.array(fc.double()), (json, doubles) => {
      const back = parseExact(stringifyExact({ json, doubles })) as { json: unknown; doubles: number[] };
      expect(back.json).toEqual(json);
      expect(back.doubles.length).toBe(doubles.length);
      back.doubles.forEach((d, i) => expect(Object.is(d, doubles[i])).toBe(true));
    }));
  });
});

describe('samples as CSV', () => {
  test('every double parses back to itself, -0, NaN and infinities included', () => {
    fc.assert(fc.property(fc.double(), (x) => {
      expect(Object.is(parseNumber(numberText(x)), x)).toBe(true);
    }), { numRuns: 5000 });
  });

  test('a node\'s file reads back as the series written, sensors in their order', () => {
    const columns = [
      { sensor: 'module0.power', t: [1764496800000.1234, 1764496800100.9999], v: [312.50000000000006, -0] },
      { sensor: 'gpu0.power', t: Array.from({ length: 20_011 }, (_, i) => 1764496800000 + i / 3), v: Array.from({ length: 20_011 }, (_, i) => Math.sqrt(i)) },
    ];
    const back = parseSamplesCsv([...samplesCsv(columns)].join(''));
    expect(back.map((c) => c.sensor)).toEqual(['module0.power', 'gpu0.power']);
    back.forEach((c, k) => {
      const written = columns[k]!;
      expect(c.t.length).toBe(written.t.length);
      expect(c.t.filter((t, i) => !Object.is(t, written.t[i])).length + c.v.filter((v, i) => !Object.is(v, written.v[i])).length).toBe(0);
    });
  });
});

describe('a bundle written and verified (a synthetic import campaign)', () => {
  let written: Awaited<ReturnType<typeof writtenBundle>>;
  let bundle: EvidenceBundle;
  beforeAll(async () => {
    written = await writtenBundle();
    bundle = await openEvidenceBundle(written.file);
  });

  test('holds the layout: manifest last, every file listed with its sha256, each run\'s files', () => {
    const names = [...bundle.members.keys()];
    expect(names[0]).toBe(BUNDLE_FILES.readme);
    expect(names.at(-1)).toBe(BUNDLE_FILES.manifest);
    expect(names.at(-2)).toBe(BUNDLE_FILES.samplesParquet);
    expect(bundle.manifest.files.map((f) => f.path)).toEqual(names.slice(0, -1));
    const run = bundle.manifest.runs[0]!;
    expect(names).toEqual(expect.arrayContaining([runFile(run, 'run'), runFile(run, 'inputs'), runFile(run, 'energy'), runFile(run, 'marks'), samplesFile(run, 'n1'), samplesFile(run, 'n2')]));
    expect(bundle.manifest).toMatchObject({ format: 'erg-evidence/1', ergVersion: '0.1.0-test', campaignId: written.source.campaignId, createdAt: '2026-11-30T12:00:00.000Z' });
    expect(bundle.manifest.runs).toHaveLength(4);
  });

  test('a run\'s inputs read back from the bundle are the inputs written, samples bit for bit, and give the stored figures', () => {
    for (const run of bundle.manifest.runs) {
      const back = bundle.runInputs(run)!;
      const original = written.source.inputs.get(run)!;
      expect(back.series.map((s) => [s.node, s.sensor, Array.from(s.t), Array.from(s.v)])).toEqual(original.series.map((s) => [s.node, s.sensor, Array.from(s.t), Array.from(s.v)]));
      const { series: _a, ...restBack } = back;
      const { series: _b, ...restOriginal } = original;
      expect(restBack).toEqual(restOriginal);
      expect(JSON.parse(JSON.stringify(runFiguresOf(back)))).toEqual(JSON.parse(JSON.stringify(runFiguresOf(original))));
    }
  });

  test('verifies: every hash holds, every run recomputed equals its stored figures, the results equal results.json', () => {
    const report = verifyBundle(bundle);
    expect(report.differences).toEqual([]);
    expect(report).toMatchObject({ files: bundle.members.size - 1, runsRecomputed: 4, resultsRecomputed: true });
  });

  test("a search's bundle: its untried candidate counted in results.json as the route counts it, and verified so", async () => {
    const file = path.join(tempDir(), 'search.tar');
    await pipeline(bundleStream(syntheticSource(1, { search: true })), createWriteStream(file));
    const search = await openEvidenceBundle(file);
    const results = search.json(BUNDLE_FILES.results) as { unmeasured: unknown; configurations: { key: string }[] };
    expect(results.unmeasured).toEqual({ configurations: 1, list: `/v1/campaigns/${search.manifest.campaignId}/configurations?measured=false` });
    expect(results.configurations.map((c) => c.key)).toEqual(['cap=200', 'cap=300']);
    expect(verifyBundle(search).differences).toEqual([]);
    // The untried candidate dropped from the count: a difference.
    const uncounted = altered(search.members, BUNDLE_FILES.results, (data) => Buffer.from(data.toString('utf8').replace('"configurations":1,', '"configurations":0,')), true);
    expect(verifyBundle(new EvidenceBundle(uncounted)).differences.map((d) => d.path)).toEqual(['unmeasured.configurations']);
  });

  test('one sample changed: the sha256 names the file; re-hashed, the recomputed figures name the run, its energy and the results', () => {
    const run = bundle.manifest.runs[1]!;
    const file = samplesFile(run, 'n2');
    const flip = (data: Buffer) => {
      const lines = gunzipSync(data).toString('utf8').split('\n');
      // Each node's module0.power follows its gpu0.power (130 samples): the energy comes from the module.
      const [sensor, t, v] = lines[200]!.split(',');
      expect(sensor).toBe('module0.power');
      lines[200] = `${sensor},${t},${Number(v) + 1}`;
      return gzipSync(lines.join('\n'));
    };
    const unhashed = verifyBundle(new EvidenceBundle(altered(bundle.members, file, flip, false)));
    expect(unhashed.differences[0]).toMatchObject({ file, run, path: 'sha256' });
    expect(unhashed.differences.filter((d) => d.path === 'sha256')).toHaveLength(1);

    const rehashed = verifyBundle(new EvidenceBundle(altered(bundle.members, file, flip, true)));
    const paths = rehashed.differences.map((d) => `${d.file} ${d.path}`);
    expect(paths).toContain(`${runFile(run, 'energy')} energyJ`);
    expect(rehashed.differences.find((d) => d.path === 'energyJ')).toMatchObject({ run, stored: expect.any(Number), recomputed: expect.any(Number) });
    expect(paths.some((p) => p.startsWith(`${BUNDLE_FILES.results} configurations[0].energyJ`))).toBe(true);
  });

  test('one stored figure changed (and re-hashed): verify names the file, the run, the path, stored and recomputed', () => {
    const run = bundle.manifest.runs[2]!;
    const file = runFile(run, 'energy');
    const stored = JSON.parse(bundle.text(file)!);
    const changed = verifyBundle(new EvidenceBundle(altered(bundle.members, file, () => Buffer.from(JSON.stringify({ ...stored, timeS: stored.timeS + 1e-9 })), true)));
    expect(changed.differences).toEqual([{ file, run, path: 'timeS', stored: stored.timeS + 1e-9, recomputed: stored.timeS }]);
  });

  test('a reader that goes away mid-bundle stops it, without an error nobody listens to (which would end the process)', async () => {
    const source = syntheticSource();
    const read: string[] = [];
    const stream = bundleStream({ ...source, runInputs: async (id) => (read.push(id), source.runInputs(id)) });
    // The first run's files on their way: the reader closes the connection. (An 'error' event
    // nobody listens to is an uncaught exception: Jest fails this file with it, as it ended the API.)
    for await (const _chunk of stream) if (read.length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(read).toHaveLength(1);
    expect(stream.destroyed).toBe(true);
  });

  test('an archive cut short (no manifest) is unreadable, not a difference', async () => {
    const members = new Map(bundle.members);
    members.delete(BUNDLE_FILES.manifest);
    expect(() => new EvidenceBundle(members)).toThrow(/no manifest.json/);
  });
});
