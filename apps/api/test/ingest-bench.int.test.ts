// bench/ingest.js in its quick mode: every sample the agents sent is committed — in
// telemetry_batches and in the chunks — and the plain COPY baseline loads as many rows. The rates
// it prints belong in docs/benchmarks.md, not in assertions. Needs the build (dist).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@erg/testkit';

test('bench/ingest.js --quick: 4 agents for 3 s, every sample sent is committed, and COPY loads as many rows', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(repoRoot(), 'bench', 'ingest.js'), '--quick', '--json'], {
    cwd: repoRoot(), timeout: 60_000,
  });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  expect(result).toMatchObject({ agents: 4, samplesPerBatch: 8 * 250 });
  expect(result.requests).toBeGreaterThanOrEqual(4);
  expect(result.samplesSent).toBeGreaterThan(0);
  // Acknowledged, stored per batch, and stored in the per-sensor chunks: all equal to what was sent.
  expect(result.samplesCommitted).toBe(result.samplesSent);
  expect(result.storedSamples).toBe(result.samplesSent);
  expect(result.samplesInChunks).toBe(result.samplesSent);
  expect(result.storedBatches).toBe(result.requests);
  expect(result.storedChunks).toBe(result.requests * 8);
  expect(result.runsWithTelemetry).toBe(4);
  expect(result.plainCopyRows).toBe(result.samplesSent);
  // Every figure is a number the bench measured (their size is for docs/benchmarks.md).
  for (const key of ['seconds', 'httpSamplesPerS', 'httpMBPerS', 'storedBytesPerSample', 'plainCopySamplesPerS', 'plainCopyBytesPerSample']) {
    expect(Number.isFinite(result[key])).toBe(true);
    expect(result[key]).toBeGreaterThanOrEqual(0);
  }
}, 90_000);
