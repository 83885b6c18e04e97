// bench/hostile-requests.js in quick mode: every hostile request once, against a real API on a
// port, while /healthz is polled. Asserts the answers, not the timings (those are the bench's,
// recorded in docs/benchmarks.md). Needs the build: the API's worker threads run from dist.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { runHostileBench } = require('../../../bench/hostile-requests.js') as {
  runHostileBench(options: { repeat: number }): Promise<Array<{ kind: string; expect?: number; statuses: number[]; codes: Array<string | null>; healthz: { n: number } }>>;
};

test('every hostile request gets the answer it should while /healthz keeps answering', async () => {
  const results = await runHostileBench({ repeat: 1 });
  const answers = Object.fromEntries(results.filter((r) => r.kind !== 'idle').map((r) => [r.kind, `${r.statuses.join(',')} ${r.codes.join(',')}`]));
  expect(answers).toEqual({
    'grid-refused': '400 campaign_too_large',
    'grid-accepted': '201 ',
    'grid-viewer': '403 ERG_FORBIDDEN',
    'telemetry-empty-series': '400 too_big',
    'telemetry-max-batch': '200 ',
    'deep-json': '400 document_too_large',
    'deep-yaml': '400 document_too_large',
    'yaml-alias-bomb': '400 document_too_large',
    'yaml-1mib-flow': '400 campaign_too_large',
    'oversized-keys': '400 invalid_format',
    'many-issues': '400 exclude_never_matches',
  });
  // /healthz answered 200 throughout (the client fails otherwise) and was polled during each request.
  for (const r of results) expect(r.healthz.n).toBeGreaterThan(0);
}, 180_000);
