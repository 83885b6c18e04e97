import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeCampaignText } from '@erg/spec';
import { expandRuns, validateCampaign, validateCampaignText } from '../src';

const designExample = readFileSync(join(__dirname, 'fixtures', 'offload-vs-sp.yaml'), 'utf8');
const minimal = { name: 'n', cluster: 'local', run: 'srun ./bench' };

describe('validateCampaign', () => {
  it('expands the design.md example: (2×3 grid − 1 excluded) × 3 zip positions, in order', () => {
    const result = validateCampaignText(designExample, 'yaml', { maxRuns: 1000 });
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    expect(result.configurations.map((c) => c.key)).toEqual([
      'micro_batch=8;offload=none;seq_len=4096;sp=1',
      'micro_batch=4;offload=none;seq_len=8192;sp=1',
      'micro_batch=2;offload=none;seq_len=16384;sp=1',
      'micro_batch=8;offload=none;seq_len=4096;sp=2',
      'micro_batch=4;offload=none;seq_len=8192;sp=2',
      'micro_batch=2;offload=none;seq_len=16384;sp=2',
      'micro_batch=8;offload=cpu;seq_len=4096;sp=1',
      'micro_batch=4;offload=cpu;seq_len=8192;sp=1',
      'micro_batch=2;offload=cpu;seq_len=16384;sp=1',
      'micro_batch=8;offload=cpu;seq_len=4096;sp=2',
      'micro_batch=4;offload=cpu;seq_len=8192;sp=2',
      'micro_batch=2;offload=cpu;seq_len=16384;sp=2',
      'micro_batch=8;offload=cpu;seq_len=4096;sp=4',
      'micro_batch=4;offload=cpu;seq_len=8192;sp=4',
      'micro_batch=2;offload=cpu;seq_len=16384;sp=4',
    ]);
    expect(result.configurations[0]?.parameters).toEqual({ offload: 'none', sp: 1, micro_batch: 8, seq_len: 4096 });
    const runs = expandRuns(result.configurations, result.spec.repetitions);
    expect(runs).toHaveLength(45);
    expect(runs.slice(0, 4)).toEqual([
      { configKey: 'micro_batch=8;offload=none;seq_len=4096;sp=1', repetition: 1 },
      { configKey: 'micro_batch=8;offload=none;seq_len=4096;sp=1', repetition: 2 },
      { configKey: 'micro_batch=8;offload=none;seq_len=4096;sp=1', repetition: 3 },
      { configKey: 'micro_batch=4;offload=none;seq_len=8192;sp=1', repetition: 1 },
    ]);
  });

  it('refuses the design.md example under a smaller run limit', () => {
    const result = validateCampaignText(designExample, 'yaml', { maxRuns: 44 });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues[0]?.message).toMatch(/^the campaign has 45 runs \(15 configurations × 3 repetitions\), more than the limit of 44/);
  });

  it('gives the same answer for the spec as an object', () => {
    const decoded = decodeCampaignText(designExample, 'yaml');
    if (!decoded.ok) throw new Error('decode failed');
    expect(validateCampaign(decoded.raw, { maxRuns: 1000 })).toEqual(validateCampaignText(designExample, 'yaml', { maxRuns: 1000 }));
  });

  it('returns spec issues without checking the size', () => {
    const result = validateCampaign({ ...minimal, parameters: { a: ['x y'] } }, { maxRuns: 0 });
    expect(result).toEqual({ ok: false, issues: [expect.objectContaining({ path: 'parameters.a[0]' })] });
  });

  it('refuses a campaign whose excludes remove everything', () => {
    const result = validateCampaign({ ...minimal, parameters: { a: [1, 2] }, exclude: [{ a: [1, 2] }] }, { maxRuns: 10 });
    expect(result).toEqual({ ok: false, issues: [{ path: 'exclude', code: 'nothing_to_run', message: expect.stringContaining('every configuration') }] });
  });

  it('has one configuration without parameters', () => {
    const result = validateCampaign(minimal, { maxRuns: 1 });
    expect(result.ok && result.configurations).toEqual([{ key: 'default', parameters: {} }]);
  });

  it('reports syntax errors of text as issues', () => {
    const result = validateCampaignText('{', 'json', { maxRuns: 1 });
    expect(result).toEqual({ ok: false, issues: [expect.objectContaining({ path: '(root)', code: 'syntax_error' })] });
  });
});

describe('templated sbatch options: the power knobs a study sweeps', () => {
  const sweep = (slurm: Record<string, unknown>, clocks: (string | number)[] = [1980, 1410]) =>
    validateCampaign({ name: 'clocks', cluster: 'local', run: 'srun ./app', parameters: { clock: clocks, mode: ['a', 'b'] }, slurm }, { maxRuns: 1000 });

  test('gpuFreq and cpuFreq take a configuration\'s parameters and are checked per configuration', () => {
    expect(sweep({ gpuFreq: '{{clock}}', cpuFreq: 'high' }).ok).toBe(true);
    expect(sweep({ gpuFreq: '{{clock}},memory=high' }).ok).toBe(true);
  });

  test('a value Slurm would reject is refused with the field and the configuration it came from', () => {
    const result = sweep({ gpuFreq: '{{clock}}' }, [1980, 'turbo']);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toEqual([
      expect.objectContaining({ path: 'slurm.gpuFreq', code: 'invalid_slurm_option', message: expect.stringMatching(/^configuration clock=turbo;mode=a: "turbo" is not a --gpu-freq value/) }),
      expect.objectContaining({ path: 'slurm.gpuFreq', message: expect.stringMatching(/^configuration clock=turbo;mode=b:/) }),
    ]);
  });

  test('a placeholder that names no parameter, or a built-in, is refused before any expansion', () => {
    for (const name of ['nope', 'run_id']) {
      const result = sweep({ gpuFreq: `{{${name}}}` });
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.issues).toEqual([expect.objectContaining({ path: 'slurm.gpuFreq', code: 'unknown_placeholder' })]);
    }
  });

  test('plain values keep their format checks; a template may not smuggle other characters', () => {
    for (const slurm of [{ gpuFreq: 'fastest' }, { cpuFreq: '2400000-1:Turbo' }, { gpuFreq: '{{clock}} --wrap=x' }]) {
      const result = sweep(slurm);
      expect(result.ok).toBe(false);
    }
  });
});

describe('resources.nodes from a parameter: a sweep over the node count', () => {
  const sweep = (nodes: unknown[], resources: Record<string, unknown> = { nodes: '{{nodes}}' }) =>
    validateCampaign({ name: 'scaling', cluster: 'local', run: 'srun ./app', parameters: { nodes }, resources }, { maxRuns: 1000 });

  test('each configuration asks for its own node count', () => {
    const result = sweep([1, 2, 4]);
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    expect(result.spec.resources.nodes).toBe('{{nodes}}');
    expect(result.configurations.map((c) => c.key)).toEqual(['nodes=1', 'nodes=2', 'nodes=4']);
  });

  test('a value that is no whole number of nodes is refused, naming the configuration', () => {
    const result = sweep([2, 'all', 0]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toEqual([
      { path: 'resources.nodes', code: 'invalid_node_count', message: 'configuration nodes=all: resources.nodes is "all", not a whole number of nodes from 1 to 10000' },
      { path: 'resources.nodes', code: 'invalid_node_count', message: 'configuration nodes=0: resources.nodes is "0", not a whole number of nodes from 1 to 10000' },
    ]);
  });

  test('anything but one placeholder is refused at the field', () => {
    const result = sweep([1], { nodes: '{{nodes}}x' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toEqual([expect.objectContaining({ path: 'resources.nodes', message: expect.stringContaining('is not a node count') })]);
  });
});
