import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '@erg/testkit';
import { BUNDLE_FILES, BUNDLE_FORMAT, MARKS_COLUMNS, PARQUET_COLUMNS, runFile, SAMPLES_COLUMNS, samplesFile } from '../src/layout';

// layout.ts owns the bundle's names; erg.py (a single file workloads import, with no access to
// it) keeps a copy for open_bundle. The copy must say what the owner says.
const ergPy = readFileSync(path.join(repoRoot(), 'apps', 'agent', 'marks', 'erg.py'), 'utf8');
const pyConstant = (name: string): string => {
  const m = new RegExp(`^${name} = "([^"]*)"$`, 'm').exec(ergPy);
  if (!m) throw new Error(`erg.py has no ${name} = "..."`);
  return m[1]!;
};

describe("erg.py's copy of the bundle's layout", () => {
  test('names the format and every file as layout.ts does', () => {
    const run = '7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f';
    const printf = (pattern: string, ...args: string[]) => args.reduce((s, a) => s.replace('%s', a), pattern);
    expect({
      format: pyConstant('BUNDLE_FORMAT'), manifest: pyConstant('_MANIFEST'), campaign: pyConstant('_CAMPAIGN'), specSubmitted: pyConstant('_SPEC_SUBMITTED'),
      specStored: pyConstant('_SPEC_STORED'), results: pyConstant('_RESULTS'), run: printf(pyConstant('_RUN_FILE'), run), inputs: printf(pyConstant('_INPUTS_FILE'), run),
      energy: printf(pyConstant('_ENERGY_FILE'), run), marks: printf(pyConstant('_MARKS_FILE'), run), samples: printf(pyConstant('_SAMPLES_FILE'), run, 'n1'),
    }).toEqual({
      format: BUNDLE_FORMAT, manifest: BUNDLE_FILES.manifest, campaign: BUNDLE_FILES.campaign, specSubmitted: BUNDLE_FILES.specSubmitted, specStored: BUNDLE_FILES.specStored,
      results: BUNDLE_FILES.results, run: runFile(run, 'run'), inputs: runFile(run, 'inputs'), energy: runFile(run, 'energy'), marks: runFile(run, 'marks'), samples: samplesFile(run, 'n1'),
    });
  });

  test('reads the columns layout.ts writes', () => {
    expect(ergPy).toContain(`columns = [${PARQUET_COLUMNS.map((c) => `"${c}"`).join(', ')}]`);
    expect(ergPy).toContain(`for node, offset, kind, name, t, clock, writer in _csv_rows(data):`);
    expect(MARKS_COLUMNS).toEqual(['node', 'offset', 'kind', 'name', 't', 'clock', 'writer']);
    expect(ergPy).toContain('for sensor, t, v in _csv_rows(data):');
    expect(SAMPLES_COLUMNS).toEqual(['sensor', 't', 'v']);
  });
});
