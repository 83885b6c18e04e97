import { colors, dataMovementCsv, dataMovementMarkdown, dataMovementTable, MOVEMENT_CSV_COLUMNS, sortResults } from '@erg/cli';
import { CampaignResults } from '@erg/spec';
import { resultsWithMovement } from './fixtures/data-movement';
import { CAMPAIGN_ID, erg, parseCsv, routes } from './helpers';

const plain = colors(false);
const answering = (body: unknown) => routes({ [`GET /v1/campaigns/${CAMPAIGN_ID}/results`]: { status: 200, body } });

test("the fixture is a body the API's schema accepts", () => {
  expect(CampaignResults.parse(resultsWithMovement())).toEqual(resultsWithMovement());
});

describe('results --data-movement as a table', () => {
  const table = dataMovementTable(resultsWithMovement(), plain);
  const lines = table.split('\n');

  test('one row per configuration and link kind, in the results’ order; bytes, interval, rate, J per GB; overlap on the first row', () => {
    expect(lines.slice(0, 4)).toEqual([
      'configuration  n  link        bytes/run     ± 95 %       rate       J/GB  overlap',
      'mode=z;n=3     5  PCIe          20.0 GB      ± 0 B   500 MB/s   450 J/GB        —',
      'mode=a,b;n=1   5  PCIe           400 GB  ± 8.78 GB  40.0 GB/s  50.0 J/GB   60.0 %',
      '                  NVLink-C2C    2.00 TB      ± 0 B   200 GB/s  10.0 J/GB',
    ]);
  });

  test('bytes per phase beside energy per phase, for the configurations that marked phases', () => {
    const at = lines.indexOf('Bytes per phase (inclusive, means per run):');
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 4)).toEqual([
      '  configuration  phase        energy    PCIe  NVLink-C2C',
      '  mode=a,b;n=1   offload     8.00 kJ  300 GB     1.90 TB',
      '                 (unmarked)  12.0 kJ  100 GB      100 GB',
    ]);
  });

  test('--sort orders the configurations as it orders the results', () => {
    const byTime = dataMovementTable(sortResults(resultsWithMovement(), 'time'), plain).split('\n');
    expect(byTime[1]!.split(/\s+/)[0]).toBe('mode=a,b;n=1');
  });
});

describe('erg results --data-movement', () => {
  test.each(['table', 'markdown', 'csv', 'json'])('--format %s: stdout only, exit 0, one request', async (format) => {
    const out = await erg(['results', CAMPAIGN_ID, '--data-movement', '--format', format], { api: answering(resultsWithMovement()) });
    expect(out.code).toBe(0);
    expect(out.stderr).toBe('');
    expect(out.requests).toHaveLength(1);
    if (format === 'table') expect(out.stdout).toBe(dataMovementTable(resultsWithMovement(), plain));
    if (format === 'markdown') expect(out.stdout).toBe(dataMovementMarkdown(resultsWithMovement()));
    if (format === 'json') expect(JSON.parse(out.stdout)).toEqual(resultsWithMovement().dataMovement);
  });

  test('CSV: raw SI numbers, one row per configuration and kind', async () => {
    const rows = parseCsv(dataMovementCsv(resultsWithMovement()));
    expect(rows[0]).toEqual([...MOVEMENT_CSV_COLUMNS]);
    expect(rows.slice(1).map((r) => [r[0], r[1], r[3]])).toEqual([['mode=z;n=3', 'pcie', '20000000000'], ['mode=a,b;n=1', 'pcie', '400000000000'], ['mode=a,b;n=1', 'c2c', '2000000000000']]);
    expect(Number(rows[2]![10])).toBeCloseTo(0.6, 9);
  });

  test('a campaign without data movement: says which sensors would measure it, exit 0; CSV keeps its header, JSON is null, the note on stderr', async () => {
    const api = answering(resultsWithMovement(null));
    const table = await erg(['results', CAMPAIGN_ID, '--data-movement'], { api });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`^No run of campaign ${CAMPAIGN_ID} measured data movement`));
    const csv = await erg(['results', CAMPAIGN_ID, '--data-movement', '--format', 'csv'], { api });
    expect(parseCsv(csv.stdout)).toEqual([[...MOVEMENT_CSV_COLUMNS]]);
    expect(csv.stderr).toContain('measured data movement');
    const json = await erg(['results', CAMPAIGN_ID, '--data-movement', '--format', 'json'], { api });
    expect(JSON.parse(json.stdout)).toBeNull();
  });

  test('with --by-phase or --group-by fingerprint: a usage error naming both flags, before any request', async () => {
    for (const extra of [['--by-phase'], ['--group-by', 'fingerprint']]) {
      const out = await erg(['results', CAMPAIGN_ID, '--data-movement', ...extra], { api: answering(resultsWithMovement()) });
      expect(out.code).toBe(2);
      expect(out.stderr).toContain('--data-movement');
      expect(out.stderr).toContain(extra[0]!);
      expect(out.requests).toEqual([]);
    }
  });
});
