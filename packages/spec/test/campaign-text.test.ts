import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeCampaignText, parseCampaignText } from '../src';

const designExample = readFileSync(join(__dirname, 'fixtures', 'offload-vs-sp.yaml'), 'utf8');

describe('parseCampaignText', () => {
  it('parses the design.md example', () => {
    const result = parseCampaignText(designExample, 'yaml');
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    const { spec } = result;
    expect(spec.name).toBe('offload-vs-sp');
    expect(spec.parameters).toEqual({ offload: ['none', 'cpu'], sp: [1, 2, 4] });
    expect(spec.zip).toEqual([{ micro_batch: [8, 4, 2], seq_len: [4096, 8192, 16384] }]);
    expect(spec.exclude).toEqual([{ offload: 'none', sp: 4 }]);
    expect(spec.resources).toEqual({ partition: 'gh200', nodes: 1, gpusPerNode: 4, time: '00:30:00', exclusive: true });
    expect(spec.slurm).toEqual({ gpuFreq: 'high', account: 'proj42' });
    expect(spec.files['ds_config.json']).toContain('"device": "{{offload}}"');
    expect(spec.metrics.map((m) => [m.name, m.reduce, m.source])).toEqual([
      ['samples_per_s', 'last', 'stdout'],
      ['steps', 'last', 'stdout'],
    ]);
    expect(spec.telemetry).toEqual({ intervalMs: 100, idleBaselineS: 30, maxThrottledShare: 0.1 });
    expect(result.raw).toMatchObject({ name: 'offload-vs-sp', repetitions: 3 });
  });

  it('parses the same spec written as JSON', () => {
    const fromYaml = parseCampaignText(designExample, 'yaml');
    if (!fromYaml.ok) throw new Error('yaml failed');
    expect(parseCampaignText(JSON.stringify(fromYaml.raw), 'json')).toEqual(fromYaml);
  });

  it('reads YAML 1.2: yes/no/on/off stay strings, unquoted numbers are numbers', () => {
    const result = parseCampaignText('name: x\ncluster: c\nrun: r\nparameters:\n  flag: [yes, no, on, off, true]\n  n: [1, 1.5, 0x10]\n', 'yaml');
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    expect(result.spec.parameters).toEqual({ flag: ['yes', 'no', 'on', 'off', true], n: [1, 1.5, 16] });
  });

  it('reports a YAML syntax error at (root) with its line and column', () => {
    const result = parseCampaignText('name: x\nparameters: [1, 2\nrun: y\n', 'yaml');
    expect(result).toEqual({
      ok: false,
      issues: [{ path: '(root)', code: 'syntax_error', message: expect.stringMatching(/^not valid YAML at line \d+, column \d+: /) }],
    });
  });

  it('refuses duplicate YAML keys', () => {
    const result = parseCampaignText('name: x\nname: y\n', 'yaml');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues[0]?.message).toBe('not valid YAML at line 2, column 1: Map keys must be unique');
  });

  it('refuses more than one YAML document', () => {
    expect(parseCampaignText('name: a\n---\nname: b\n', 'yaml').ok).toBe(false);
  });

  it('stops YAML alias bombs', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 8 }, (_, i) => {
      const prev = i === 0 ? 'a' : String.fromCharCode(97 + i);
      const name = String.fromCharCode(98 + i);
      return `${name}: &${name} [${Array(10).fill(`*${prev}`).join(', ')}]`;
    })].join('\n');
    const result = parseCampaignText(bomb, 'yaml');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues[0]?.code).toBe('syntax_error');
  });

  it('reports a JSON syntax error with its line and column', () => {
    const result = parseCampaignText('{\n  "name": "x",,\n}', 'json');
    expect(result).toEqual({
      ok: false,
      issues: [{ path: '(root)', code: 'syntax_error', message: expect.stringMatching(/^not valid JSON at line 2, column 15: /) }],
    });
  });

  it('says so when the document is empty', () => {
    for (const [text, format] of [['', 'yaml'], ['# only a comment\n', 'yaml'], ['null', 'json']] as const) {
      expect(parseCampaignText(text, format)).toEqual({
        ok: false,
        issues: [{ path: '(root)', code: 'syntax_error', message: 'the campaign spec is empty' }],
      });
    }
  });

  it('passes validation issues through', () => {
    const result = parseCampaignText('name: x\ncluster: c\nrun: echo {{nope}}\n', 'yaml');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues.map((i) => [i.path, i.code])).toEqual([['run', 'unknown_placeholder']]);
  });
});

describe('decodeCampaignText', () => {
  it('decodes without validating', () => {
    expect(decodeCampaignText('name: 1\nbogus: true\n', 'yaml')).toEqual({ ok: true, raw: { name: 1, bogus: true } });
    expect(decodeCampaignText('{"a": [1]}', 'json')).toEqual({ ok: true, raw: { a: [1] } });
  });
});
