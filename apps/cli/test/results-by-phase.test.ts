import { colors, COMPARISON_PHASES_SHOWN, comparisonSentence, phaseResultsCsv, phaseResultsMarkdown, phaseResultsTable, PHASE_CSV_COLUMNS, sortResults, stripAnsi } from '@erg/cli';
import { CampaignResults } from '@erg/spec';
import { campaignPhasesFixture, resultsWithPhases } from './fixtures/phases';
import { ANSI, CAMPAIGN_ID, erg, parseCsv, routes } from './helpers';

const plain = colors(false);
const answering = (body: unknown) => routes({ [`GET /v1/campaigns/${CAMPAIGN_ID}/results`]: { status: 200, body } });

test("the fixture is a body the API's schema accepts", () => {
  expect(CampaignResults.parse(resultsWithPhases())).toEqual(resultsWithPhases());
  expect(CampaignResults.parse(resultsWithPhases(null)).phases).toBeNull();
});

describe('results by phase as a table', () => {
  const table = phaseResultsTable(resultsWithPhases(), plain);
  const lines = table.split('\n');

  test('one row per configuration and phase, in the results’ configuration order, the key on each configuration’s first row', () => {
    expect(lines.slice(0, 7)).toEqual([
      'configuration  phase       n  self energy    ± 95 %   energy    time   share',
      'mode=z;n=3     backward    5      3.00 kJ  ± 58.9 J  3.00 kJ  13.0 s  33.3 %',
      '               forward     5      3.50 kJ  ± 68.7 J  3.50 kJ  15.0 s  38.9 %',
      '               io          5      1.50 kJ  ± 29.4 J  1.50 kJ  7.00 s  16.7 %',
      '               train       5        300 J  ± 5.89 J  6.80 kJ  29.5 s  75.6 %',
      '               (unmarked)  5        700 J  ± 13.7 J    700 J  3.50 s   7.8 %',
      'mode=a,b;n=1   backward    5      7.00 kJ   ± 137 J  7.00 kJ  3.50 s  35.0 %',
    ]);
    expect(lines[11]).toMatch(/^mode=x=y;n=2\s+backward\s+5\s+4\.20 kJ/);
    expect(lines[16]).toBe('');
  });

  test('--sort orders the configurations as it orders the results', () => {
    const byTime = phaseResultsTable(sortResults(resultsWithPhases(), 'time'), plain).split('\n');
    expect([byTime[1], byTime[6], byTime[11]].map((l) => l!.split(/\s+/)[0])).toEqual(['mode=a,b;n=1', 'mode=x=y;n=2', 'mode=z;n=3']);
  });

  test('the comparison: what the runtime-optimal configuration spends beyond the energy-optimal one, and the phases that account for it', () => {
    expect(table).toContain(
      [
        'The runtime-optimal configuration (mode=a,b;n=1) spends 11.0 kJ more than the energy-optimal one (mode=z;n=3); phase forward accounts for 40.9 % of it.',
        '  phase       runtime-optimal  energy-optimal  difference  share of it',
        '  forward             8.00 kJ         3.50 kJ    +4.50 kJ       40.9 %',
        '  backward            7.00 kJ         3.00 kJ    +4.00 kJ       36.4 %',
        '  io                  3.00 kJ         1.50 kJ    +1.50 kJ       13.6 %',
        '  (unmarked)          1.50 kJ           700 J      +800 J        7.3 %',
        '  train                 500 J           300 J      +200 J        1.8 %',
      ].join('\n'),
    );
  });

  test('beyond the top phases of the comparison, the rest are counted', () => {
    const results = resultsWithPhases();
    const c = results.phases!.comparison!;
    c.phases.push({ name: 'z1', runtimeOptimalJ: 1, energyOptimalJ: 1, differenceJ: 0, shareOfDifference: 0 }, { name: 'z2', runtimeOptimalJ: 1, energyOptimalJ: 1, differenceJ: 0, shareOfDifference: 0 });
    const text = phaseResultsTable(results, plain);
    expect(text).toContain(`  … and ${c.phases.length - COMPARISON_PHASES_SHOWN} more (--format json has them all)`);
    expect(text).not.toContain('  z1 ');
  });

  test('the comparison sentence when there is nothing, or less, to account for', () => {
    const c = campaignPhasesFixture().comparison!;
    expect(comparisonSentence({ ...c, energyOptimal: c.runtimeOptimal })).toBe(
      'The runtime-optimal configuration (mode=a,b;n=1) is also the energy-optimal one: no difference to account for.',
    );
    expect(comparisonSentence({ ...c, differenceJ: -500, phases: [] })).toBe(
      'The runtime-optimal configuration (mode=a,b;n=1) spends 500 J less than the energy-optimal one (mode=z;n=3).',
    );
  });

  test('measured configurations none of whose runs marked phases are named', () => {
    const results = resultsWithPhases();
    results.phases!.configurations = results.phases!.configurations.filter((c) => c.key !== 'mode=x=y;n=2');
    expect(phaseResultsTable(results, plain)).toContain('\nWithout phases (1): no run marked any\n  mode=x=y;n=2\n');
    expect(table).not.toContain('Without phases');
  });

  test('colour only when asked; the text is the same without it', () => {
    const coloured = phaseResultsTable(resultsWithPhases(), colors(true));
    expect(coloured).toMatch(ANSI);
    expect(stripAnsi(coloured)).toBe(table);
  });
});

describe('results by phase as Markdown and CSV', () => {
  test('Markdown: the same rows, the key as code on each configuration’s first row, the comparison as a table', () => {
    const md = phaseResultsMarkdown(resultsWithPhases());
    const rows = md.split('\n').filter((l) => l.startsWith('|'));
    expect(rows[0]).toBe('| configuration | phase | n | self energy | ± 95 % | energy | time | share |');
    expect(rows[1]).toBe('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
    expect(rows[2]).toBe('| `mode=z;n=3` | backward | 5 | 3.00 kJ | ± 58.9 J | 3.00 kJ | 13.0 s | 33.3 % |');
    expect(rows[3]).toBe('|  | forward | 5 | 3.50 kJ | ± 68.7 J | 3.50 kJ | 15.0 s | 38.9 % |');
    expect(md).toContain('\n| forward | 8.00 kJ | 3.50 kJ | +4.50 kJ | 40.9 % |\n');
    expect(md).toContain('phase forward accounts for 40.9 % of it.');
  });

  test('CSV: one row per configuration × phase, raw SI numbers that parse back to the API’s, share a fraction', () => {
    const results = resultsWithPhases();
    const [header, ...body] = parseCsv(phaseResultsCsv(results));
    expect(header).toEqual([
      'key', 'phase', 'n', 'self_energy_j', 'self_energy_ci95_low', 'self_energy_ci95_high', 'energy_j', 'energy_ci95_low', 'energy_ci95_high',
      'time_s', 'time_ci95_low', 'time_ci95_high', 'share',
    ]);
    expect(header).toEqual([...PHASE_CSV_COLUMNS]);
    const expected = ['mode=z;n=3', 'mode=a,b;n=1', 'mode=x=y;n=2'].flatMap((key) => {
      const c = results.phases!.configurations.find((x) => x.key === key)!;
      return c.phases.map((p) => [
        key, p.name, p.selfEnergyJ.n, p.selfEnergyJ.mean, ...p.selfEnergyJ.ci95!, p.energyJ.mean, ...p.energyJ.ci95!, p.timeS.mean, ...p.timeS.ci95!, p.energyJ.mean! / c.energyJ.mean!,
      ].map(String));
    });
    expect(body).toEqual(expected);
    expect(phaseResultsCsv(results)).toContain('"mode=a,b;n=1",backward,5,7000,');
  });
});

describe('erg results --by-phase', () => {
  test.each(['table', 'markdown', 'csv', 'json'])('--format %s: stdout only, exit 0, one request without groupBy', async (format) => {
    const out = await erg(['results', CAMPAIGN_ID, '--by-phase', '--format', format], { api: answering(resultsWithPhases()) });
    expect(out.code).toBe(0);
    expect(out.stderr).toBe('');
    expect(out.requests).toHaveLength(1);
    expect(out.requests[0]!.query.has('groupBy')).toBe(false);
    if (format === 'table') expect(out.stdout).toBe(phaseResultsTable(resultsWithPhases(), plain));
    if (format === 'markdown') expect(out.stdout).toBe(phaseResultsMarkdown(resultsWithPhases()));
    if (format === 'csv') expect(out.stdout).toBe(phaseResultsCsv(resultsWithPhases()));
  });

  test("--format json prints the API's phases member", async () => {
    const out = await erg(['results', CAMPAIGN_ID, '--by-phase', '--format', 'json'], { api: answering(resultsWithPhases()) });
    expect(JSON.parse(out.stdout)).toEqual(resultsWithPhases().phases);
    const sorted = await erg(['results', CAMPAIGN_ID, '--by-phase', '--format', 'json', '--sort', 'energy'], { api: answering(resultsWithPhases()) });
    expect(JSON.parse(sorted.stdout).configurations.map((c: { key: string }) => c.key)).toEqual(['mode=z;n=3', 'mode=x=y;n=2', 'mode=a,b;n=1']);
    expect(JSON.parse(sorted.stdout).comparison).toEqual(resultsWithPhases().phases!.comparison);
  });

  test('a campaign without phases: says so and how to mark them, exit 0; CSV keeps its header and JSON is null, the note on stderr', async () => {
    const api = answering(resultsWithPhases(null));
    const table = await erg(['results', CAMPAIGN_ID, '--by-phase'], { api });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`^No run of campaign ${CAMPAIGN_ID} marked phases\\.\\nTo measure phases, have the workload mark them:\\n  erg-mark begin NAME`));
    expect(table.stdout).toContain('import erg; with erg.phase("NAME")');
    const md = await erg(['results', CAMPAIGN_ID, '--by-phase', '--format', 'markdown'], { api });
    expect(md.stdout).toContain('- `erg-mark begin NAME … erg-mark end NAME` in a job script');
    const csv = await erg(['results', CAMPAIGN_ID, '--by-phase', '--format', 'csv'], { api });
    expect(csv.code).toBe(0);
    expect(parseCsv(csv.stdout)).toEqual([[...PHASE_CSV_COLUMNS]]);
    expect(csv.stderr).toContain('marked phases');
    const json = await erg(['results', CAMPAIGN_ID, '--by-phase', '--format', 'json'], { api });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toBeNull();
    expect(json.stderr).toContain('marked phases');
  });

  test('--by-phase with --group-by fingerprint is a usage error naming both flags, before any request', async () => {
    const out = await erg(['results', CAMPAIGN_ID, '--by-phase', '--group-by', 'fingerprint'], { api: answering(resultsWithPhases()) });
    expect(out.code).toBe(2);
    expect(out.stdout).toBe('');
    expect(out.stderr).toMatch(/--by-phase.*--group-by fingerprint/);
    expect(out.requests).toEqual([]);
    const fine = await erg(['results', CAMPAIGN_ID, '--by-phase', '--group-by', 'configuration'], { api: answering(resultsWithPhases()) });
    expect(fine.code).toBe(0);
  });

  test('without --by-phase the results table is unchanged by the phases member', async () => {
    const withPhases = await erg(['results', CAMPAIGN_ID], { api: answering(resultsWithPhases()) });
    const without = await erg(['results', CAMPAIGN_ID], { api: answering(resultsWithPhases(null)) });
    // Only the study's answer at the end names the phase that differs most (results-answer.test.ts).
    const phaseLine = /^  Phase: .*\n/m;
    expect(without.stdout).toMatch(/^  Phase: not known/m);
    expect(withPhases.stdout).toMatch(/^  Phase: forward differs most/m);
    expect(withPhases.stdout.replace(phaseLine, '')).toBe(without.stdout.replace(phaseLine, ''));
    expect(withPhases.stdout.replace(phaseLine, '')).not.toContain('phase');
  });
});
