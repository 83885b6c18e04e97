import { TemplateError } from '@erg/spec';
import {
  InvalidRenderInputError,
  renderJobScript,
  renderRunFiles,
  resourceDirectiveLines,
  UnsafeDirectiveValueError,
  UnsafeParameterValueError,
} from '../src';
import { renderInput, spec } from './helpers';

function fileOf(files: ReturnType<typeof renderRunFiles>, name: string) {
  const file = files.find((f) => f.name === name);
  if (!file) throw new Error(`no ${name} in ${files.map((f) => f.name).join(', ')}`);
  return file;
}

const directives = (script: string) => script.split('\n').filter((l) => l.startsWith('#SBATCH '));

describe('renderRunFiles', () => {
  const full = renderInput({
    runId: 'r42',
    campaignId: 'c7',
    repetition: 3,
    configKey: 'offload=cpu;sp=2',
    parameters: { offload: 'cpu', sp: 2, ckpt: true },
    defaultPartition: 'batch',
    spec: spec({
      parameters: { offload: ['none', 'cpu'], sp: [1, 2], ckpt: [true, false] },
      resources: {
        partition: 'gh200',
        nodes: 2,
        ntasksPerNode: 4,
        cpusPerTask: 16,
        gpusPerNode: 4,
        mem: '64G',
        time: '00:30:00',
        constraint: 'gh200&(ib|roce)',
        exclusive: true,
      },
      slurm: { gpuFreq: 'high', account: 'proj42', threadsPerCore: 1 },
      files: { 'ds_config.json': '{ "offload": "{{offload}}", "sp": {{sp}}, "run": "{{run_id}}" }\n' },
      run: 'srun python train.py --sp {{sp}} --offload {{offload}} --ckpt {{ckpt}} --rep {{repetition}} --c {{campaign_id}}',
    }),
  });
  const files = renderRunFiles(full);

  it('renders job.sh, run.sh and each files: entry with their modes', () => {
    expect(files.map((f) => [f.name, f.mode])).toEqual([
      ['job.sh', 0o755],
      ['run.sh', 0o755],
      ['ds_config.json', 0o644],
    ]);
  });

  it('writes every directive erg owns, then resources, then allow-listed options', () => {
    expect(directives(fileOf(files, 'job.sh').content)).toEqual([
      '#SBATCH --job-name=erg-r42',
      '#SBATCH --comment=erg:c7:r42',
      '#SBATCH --output=/scratch/erg/camp_01/run_01/slurm.out',
      '#SBATCH --error=/scratch/erg/camp_01/run_01/slurm.err',
      '#SBATCH --chdir=/scratch/erg/camp_01/run_01',
      '#SBATCH --partition=gh200',
      '#SBATCH --nodes=2',
      '#SBATCH --ntasks-per-node=4',
      '#SBATCH --cpus-per-task=16',
      '#SBATCH --gpus-per-node=4',
      '#SBATCH --mem=64G',
      '#SBATCH --time=00:30:00',
      '#SBATCH --constraint=gh200&(ib|roce)',
      '#SBATCH --exclusive',
      '#SBATCH --account=proj42',
      '#SBATCH --gpu-freq=high',
      '#SBATCH --threads-per-core=1',
    ]);
  });

  it('keeps every #SBATCH line before the first command (sbatch stops reading directives there)', () => {
    const lines = fileOf(files, 'job.sh').content.split('\n');
    const firstCommand = lines.findIndex((l, i) => i > 0 && l.trim() !== '' && !l.startsWith('#'));
    const lastDirective = lines.map((l) => l.startsWith('#SBATCH')).lastIndexOf(true);
    expect(lastDirective).toBeLessThan(firstCommand);
    expect(lines[0]).toBe('#!/bin/bash');
  });

  it('exports run facts and every parameter single-quoted', () => {
    const job = fileOf(files, 'job.sh').content;
    for (const line of [
      "export ERG_RUN_ID='r42'",
      "export ERG_CAMPAIGN_ID='c7'",
      "export ERG_REPETITION='3'",
      "export ERG_RUN_DIR='/scratch/erg/camp_01/run_01'",
      "export ERG_CONFIG_KEY='offload=cpu;sp=2'",
      "export ERG_PARAM_offload='cpu'",
      "export ERG_PARAM_sp='2'",
      "export ERG_PARAM_ckpt='true'",
    ]) {
      expect(job).toContain(`${line}\n`);
    }
  });

  it('times the workload and writes erg.timing atomically, exiting with the workload status', () => {
    const job = fileOf(files, 'job.sh').content;
    expect(job).toMatch(/set -u\n/);
    expect(job).not.toMatch(/set -e/);
    expect(job).toContain('bash ./run.sh >stdout.log 2>stderr.log\nerg_exit_code=$?\n');
    expect(job).toContain('>erg.timing.tmp\nmv -f erg.timing.tmp erg.timing\n');
    expect(job.trimEnd().split('\n').at(-1)).toBe('exit "$erg_exit_code"');
    expect(job.indexOf('erg_start_ns=$(date +%s%N)')).toBeLessThan(job.indexOf('bash ./run.sh'));
  });

  it('substitutes parameters and built-ins into run.sh and files, leaving no placeholder', () => {
    expect(fileOf(files, 'run.sh').content).toBe(
      '#!/bin/bash\nsrun python train.py --sp 2 --offload cpu --ckpt true --rep 3 --c c7\n',
    );
    expect(fileOf(files, 'ds_config.json').content).toBe('{ "offload": "cpu", "sp": 2, "run": "r42" }\n');
    for (const f of files) expect(f.content).not.toMatch(/\{\{/);
  });

  it('uses the default partition when the spec names none, and Slurm\'s default when neither does', () => {
    const withDefault = renderJobScript(renderInput({ defaultPartition: 'batch' }));
    expect(withDefault).toContain('#SBATCH --partition=batch\n');
    expect(renderJobScript(renderInput())).not.toContain('--partition');
  });

  it('renders templated sbatch options with the configuration\'s values: one directive per configuration', () => {
    const spec = { ...renderInput().spec, slurm: { gpuFreq: '{{clock}},memory=high', cpuFreq: 'Performance' } };
    const fast = renderJobScript(renderInput({ spec, parameters: { clock: 1980 } }));
    const slow = renderJobScript(renderInput({ spec, parameters: { clock: 1410 } }));
    expect(directives(fast)).toContain('#SBATCH --gpu-freq=1980,memory=high');
    expect(directives(slow)).toContain('#SBATCH --gpu-freq=1410,memory=high');
    expect(directives(slow)).toContain('#SBATCH --cpu-freq=Performance');
  });

  it('leaves a marked, empty agent hook by default and renders a given one around the timed window', () => {
    const plain = renderJobScript(renderInput());
    expect(plain).toContain('# >>> erg agent start\n# (no telemetry agent for this run)\n# <<< erg agent start');
    const hooked = renderJobScript(renderInput({ agent: { start: 'start_agent &', stop: 'stop_agent' } }));
    expect(hooked.indexOf('start_agent &')).toBeLessThan(hooked.indexOf('erg_start_ns='));
    expect(hooked.indexOf('stop_agent')).toBeGreaterThan(hooked.indexOf('mv -f erg.timing.tmp'));
  });

  it('exports extraEnv quoted, before erg\'s own variables (which therefore win)', () => {
    const job = renderJobScript(renderInput({ extraEnv: { ERG_AGENT_URL: 'http://127.0.0.1:8080/ingest?a=1&b=2', ERG_RUN_ID: 'spoof' } }));
    expect(job).toContain("export ERG_AGENT_URL='http://127.0.0.1:8080/ingest?a=1&b=2'\n");
    expect(job.lastIndexOf("export ERG_RUN_ID='run_01'")).toBeGreaterThan(job.indexOf("export ERG_RUN_ID='spoof'"));
    expect(() => renderJobScript(renderInput({ extraEnv: { 'A B': 'x' } }))).toThrow(InvalidRenderInputError);
  });

  it('is deterministic', () => {
    expect(renderRunFiles(full)).toEqual(files);
  });
});

describe('node balance (design.nodes)', () => {
  const pinned = (node?: string) => renderInput({ spec: spec({ design: { nodes: ['gh-01', 'gh-02'] } }), ...(node ? { node } : {}) });

  it('pins the run to its node with #SBATCH --nodelist, among the resource lines (so arrays split by node)', () => {
    const script = renderJobScript(pinned('gh-02'));
    expect(directives(script)).toContain('#SBATCH --nodelist=gh-02');
    expect(resourceDirectiveLines(pinned('gh-02'))).toContain('#SBATCH --nodelist=gh-02');
    expect(resourceDirectiveLines(pinned('gh-01'))).not.toEqual(resourceDirectiveLines(pinned('gh-02')));
  });

  it('without a node, Slurm chooses: no --nodelist line', () => {
    expect(directives(renderJobScript(pinned())).some((l) => l.startsWith('#SBATCH --nodelist'))).toBe(false);
  });

  it('refuses a node name that would inject a directive', () => {
    expect(() => renderJobScript(pinned('gh-01\n#SBATCH --qos=high'))).toThrow(UnsafeDirectiveValueError);
  });
});

describe('renderRunFiles refuses', () => {
  it('parameter values outside SAFE_VALUE, naming the parameter', () => {
    const input = renderInput({ parameters: { v: '$(touch /tmp/erg-pwned)' } });
    expect(() => renderRunFiles(input)).toThrow(UnsafeParameterValueError);
    expect(() => renderRunFiles(input)).toThrow(/parameter "v"/);
  });

  it('unsafe values even when the template does not use them', () => {
    const input = renderInput({ parameters: { v: 'a', other: 'x y' }, spec: spec({ run: 'echo {{v}}' }) });
    expect(() => renderRunFiles(input)).toThrow(UnsafeParameterValueError);
  });

  it('directive values with newlines or shell characters (defence in depth behind the spec)', () => {
    const base = renderInput();
    const injected = { ...base, spec: { ...base.spec, resources: { ...base.spec.resources, partition: 'gh200\n#SBATCH --uid=0' } } };
    expect(() => renderJobScript(injected)).toThrow(UnsafeDirectiveValueError);
    expect(() => renderJobScript(renderInput({ runId: 'r 1' }))).toThrow(UnsafeDirectiveValueError);
    expect(() => renderJobScript(renderInput({ campaignId: 'c;1' }))).toThrow(UnsafeDirectiveValueError);
    const account = { ...base, spec: { ...base.spec, slurm: { account: 'a$b' } } };
    expect(() => renderJobScript(account)).toThrow(UnsafeDirectiveValueError);
  });

  it('slurm options that are not allow-listed', () => {
    const base = renderInput();
    const input = { ...base, spec: { ...base.spec, slurm: { uid: '0' } as never } };
    expect(() => renderJobScript(input)).toThrow(InvalidRenderInputError);
  });

  it('run directories that are relative, contain "..", or would be expanded by Slurm (%)', () => {
    for (const runDir of ['scratch/run', '/scratch/../etc', '/scratch/%j', '/scratch/a b', '/']) {
      expect(() => renderJobScript(renderInput({ runDir }))).toThrow(InvalidRenderInputError);
    }
  });

  it('files: names that would escape the run directory or overwrite erg files', () => {
    const base = renderInput();
    for (const name of ['../x', 'job.sh', 'erg.timing', 'slurm.out', 'a/b']) {
      const input = { ...base, spec: { ...base.spec, files: { [name]: 'x' } } };
      expect(() => renderRunFiles(input)).toThrow(InvalidRenderInputError);
    }
  });

  it('parameter names that are not identifiers, and placeholders without values', () => {
    expect(() => renderJobScript(renderInput({ parameters: { 'a-b': 'x' } }))).toThrow(InvalidRenderInputError);
    // The spec refuses unknown placeholders already; the renderer must not rely on it.
    expect(() => renderRunFiles(renderInput({ spec: { ...spec(), run: 'echo {{nope}}' } }))).toThrow(TemplateError);
  });
});

describe('resources.nodes from a parameter', () => {
  it("asks for the configuration's node count, and configurations of different counts never share an array", () => {
    const of = (nodes: number) => renderInput({ spec: spec({ parameters: { nodes: [1, 2, 4] }, resources: { nodes: '{{nodes}}' }, run: 'srun hostname\n' }), parameters: { nodes } });
    expect(resourceDirectiveLines(of(4))).toContain('#SBATCH --nodes=4');
    expect(directives(renderJobScript(of(2)))).toContain('#SBATCH --nodes=2');
    expect(resourceDirectiveLines(of(1))).not.toEqual(resourceDirectiveLines(of(2)));
  });
});
