import { z } from 'zod';
import { CampaignSpec, formatPath, parseCampaignSpec, SLURM_OPTION_FLAGS, SlurmOptions, type CampaignSpecInput } from '../src';
import { issueAt, issuesOf, minimal, specOf } from './helpers';

describe('parseCampaignSpec: fields', () => {
  it('fills in every default', () => {
    expect(specOf(minimal)).toEqual({
      name: 'study',
      cluster: 'local',
      run: 'srun ./bench',
      execution: 'slurm',
      repetitions: 1,
      strategy: { kind: 'grid' },
      parameters: {},
      zip: [],
      exclude: [],
      resources: { nodes: 1, time: '01:00:00', exclusive: true },
      files: {},
      metrics: [],
      telemetry: { intervalMs: 1000, idleBaselineS: 0, maxThrottledShare: 0.1 },
      design: { order: 'randomized-blocks', confidence: 0.95 },
      validity: { maxGapS: 3, minSampleShare: 0.95, maxIntervalRatio: 1.5, maxClockOffsetMs: 1000, maxCounterDisagreement: 0.05, maxIdleCv: 0.1, excludeInvalid: false },
    });
  });

  it('keeps every field it was given', () => {
    const input: CampaignSpecInput = {
      ...minimal,
      description: 'd',
      repetitions: 5,
      resources: {
        partition: 'gh200',
        nodes: 2,
        ntasksPerNode: 4,
        cpusPerTask: 72,
        gpusPerNode: 4,
        mem: '0',
        time: '2-00:00:00',
        constraint: 'gh200&(ib|roce)',
        exclusive: true,
      },
      slurm: { account: 'proj42', gpuFreq: 'high', cpuFreq: 'Performance', threadsPerCore: 1, signal: 'B:USR1@60', licenses: 'scratch:1' },
      metrics: [{ name: 'loss', regex: 'loss=([0-9.]+)', reduce: 'min', source: 'stderr', unit: '1' }],
      telemetry: { intervalMs: 100, idleBaselineS: 30 },
    };
    expect(specOf(input)).toMatchObject(input);
  });

  it('requires a name and refuses control characters in it', () => {
    expect(issueAt(issuesOf({ cluster: 'c', run: 'x' }), 'name')).toEqual({ path: 'name', message: 'required', code: 'required' });
    expect(issueAt(issuesOf({ ...minimal, name: 'a\u0007b' }), 'name').message).toMatch(/control/);
    expect(issueAt(issuesOf({ ...minimal, name: 'x'.repeat(129) }), 'name').message).toMatch(/at most 128 characters/);
    expect(specOf({ ...minimal, name: 'Offload vs SP — GH200 (run 2)' }).name).toBe('Offload vs SP — GH200 (run 2)');
  });

  it('names an unknown top-level key and suggests the one meant', () => {
    const issue = issueAt(issuesOf({ ...minimal, paramters: { a: [1] } }), 'paramters');
    expect(issue.code).toBe('unrecognized_keys');
    expect(issue.message).toMatch(/^unknown field "paramters" \(did you mean "parameters"\?\); allowed: name, description, execution/);
  });

  it('refuses a cluster name that is not one', () => {
    expect(issueAt(issuesOf({ ...minimal, cluster: 'My Cluster' }), 'cluster').message).toContain('"My Cluster" is not a cluster name');
  });

  it('requires cluster and run when execution is slurm (the default)', () => {
    const issues = issuesOf({ name: 'x' });
    expect(issueAt(issues, 'cluster')).toMatchObject({ code: 'required', message: expect.stringContaining('execution is "slurm"') });
    expect(issueAt(issues, 'run')).toMatchObject({ code: 'required', message: expect.stringContaining('execution is "slurm"') });
  });

  it('does not require cluster or run for import', () => {
    expect(specOf({ name: 'x', execution: 'import' }).execution).toBe('import');
  });

  it('bounds repetitions', () => {
    expect(issueAt(issuesOf({ ...minimal, repetitions: 0 }), 'repetitions').message).toBe('must be at least 1, got 0');
    expect(issueAt(issuesOf({ ...minimal, repetitions: 1001 }), 'repetitions').message).toBe('must be at most 1000, got 1001');
    expect(issueAt(issuesOf({ ...minimal, repetitions: '3' }), 'repetitions').message).toBe('expected a number, got string');
  });

  it('refuses parameter names that are not identifiers, at the key', () => {
    const issue = issueAt(issuesOf({ ...minimal, parameters: { 'bad-name': [1] } }), 'parameters["bad-name"]');
    expect(issue.code).toBe('invalid_format');
    expect(issue.message).toContain('"bad-name" is not a valid name');
  });

  it('refuses an empty value list and a list over 1000 values', () => {
    expect(issueAt(issuesOf({ ...minimal, parameters: { a: [] } }), 'parameters.a').message).toBe('must have at least one value');
    const many = Array.from({ length: 1001 }, (_, i) => i);
    expect(issueAt(issuesOf({ ...minimal, parameters: { a: many } }), 'parameters.a').message).toMatch(/at most 1000 values/);
  });

  it('refuses a scalar where a list of values is expected', () => {
    expect(issueAt(issuesOf({ ...minimal, parameters: { a: 1 } }), 'parameters.a').message).toBe('expected an array, got number');
  });

  it('refuses empty zip groups and exclude entries', () => {
    const issues = issuesOf({ ...minimal, parameters: { a: [1] }, zip: [{}], exclude: [{}] });
    expect(issueAt(issues, 'zip[0]')).toEqual({ path: 'zip[0]', code: 'too_small', message: 'a zip group needs at least one parameter' });
    expect(issueAt(issues, 'exclude[0]')).toEqual({ path: 'exclude[0]', code: 'too_small', message: 'an exclude entry needs at least one parameter' });
  });
});

describe('parseCampaignSpec: resources', () => {
  it.each<[string, unknown, RegExp]>([
    ['partition', 'gh 200', /not a partition name/],
    ['nodes', 0, /at least 1/],
    ['nodes', 10_001, /at most 10000/],
    ['nodes', 1.5, /expected an integer/],
    ['ntasksPerNode', 1025, /at most 1024/],
    ['cpusPerTask', 0, /at least 1/],
    ['gpusPerNode', 65, /at most 64/],
    ['mem', '4GB', /not a Slurm memory size/],
    ['mem', '-1G', /not a Slurm memory size/],
    ['constraint', 'a b', /not a Slurm constraint/],
    ['constraint', 'a;b', /not a Slurm constraint/],
    ['exclusive', 'yes', /expected a boolean/],
  ])('refuses %s = %j', (field, value, message) => {
    expect(issueAt(issuesOf({ ...minimal, resources: { [field]: value } }), `resources.${field}`).message).toMatch(message);
  });

  it('accepts zero GPUs and memory with and without a unit', () => {
    expect(specOf({ ...minimal, resources: { gpusPerNode: 0, mem: '64G' } }).resources).toMatchObject({ gpusPerNode: 0, mem: '64G' });
    expect(specOf({ ...minimal, resources: { mem: '4096' } }).resources.mem).toBe('4096');
  });

  it('refuses unknown resource fields', () => {
    expect(issueAt(issuesOf({ ...minimal, resources: { gpus: 4 } }), 'resources.gpus').message).toMatch(/^unknown field "gpus"; allowed: partition/);
    expect(issueAt(issuesOf({ ...minimal, resources: { partiton: 'x' } }), 'resources.partiton').message).toMatch(/did you mean "partition"/);
  });
});

describe('parseCampaignSpec: slurm options', () => {
  it('refuses an option outside the allow-list, naming it and listing the allowed ones', () => {
    const issue = issueAt(issuesOf({ ...minimal, slurm: { chdir: '/tmp' } }), 'slurm.chdir');
    expect(issue.message).toBe(
      'sbatch option "chdir" is not allowed; allowed: account, qos, reservation, wckey, gpuFreq, cpuFreq, gpuBind, distribution, hint, licenses, threadsPerCore, signal',
    );
  });

  it('reports several refused options together', () => {
    expect(issueAt(issuesOf({ ...minimal, slurm: { output: 'x', wrap: 'id' } }), 'slurm').message).toMatch(
      /^sbatch options "output", "wrap" are not allowed/,
    );
  });

  it.each(['a b', 'x;id', '$(id)', 'a\nb', '%j', '', 'x'.repeat(129)])('refuses the option value %j', (value) => {
    expect(issueAt(issuesOf({ ...minimal, slurm: { account: value } }), 'slurm.account').message).toMatch(
      /not an allowed sbatch option value/,
    );
  });

  it('has a flag for every option and an option for every flag', () => {
    expect(Object.keys(SLURM_OPTION_FLAGS).sort()).toEqual(Object.keys(SlurmOptions.shape).sort());
    expect(SLURM_OPTION_FLAGS.gpuFreq).toBe('--gpu-freq');
    expect(SLURM_OPTION_FLAGS.threadsPerCore).toBe('--threads-per-core');
    for (const flag of Object.values(SLURM_OPTION_FLAGS)) expect(flag).toMatch(/^--[a-z-]+$/);
  });
});

describe('parseCampaignSpec: files', () => {
  it('accepts ordinary names', () => {
    expect(Object.keys(specOf({ ...minimal, files: { 'ds_config.json': '{}', inputs_v2: 'x', '0.txt': '' } }).files)).toEqual([
      'ds_config.json',
      'inputs_v2',
      '0.txt',
    ]);
  });

  it.each(['job.sh', 'run.sh', 'stdout.log', 'stderr.log', 'erg.timing', 'slurm.out', 'slurm.err'])('refuses the reserved name %s', (name) => {
    const issue = issueAt(issuesOf({ ...minimal, files: { [name]: 'x' } }), `files[${JSON.stringify(name)}]`);
    expect(issue.code).toBe('reserved_name');
    expect(issue.message).toContain(`"${name}"`);
    expect(issue.message).toMatch(/erg/);
  });

  it.each(['.hidden', '../up', 'a/b', 'a b', '-x', 'x'.repeat(129), ''])('refuses the file name %j', (name) => {
    const issues = issuesOf({ ...minimal, files: { [name]: 'x' } });
    expect(issueAt(issues, formatPath(['files', name])).message).toMatch(/not an allowed file name/);
  });

  it('refuses a file over 1 MiB, counting UTF-8 bytes', () => {
    const issues = issuesOf({ ...minimal, files: { big: 'é'.repeat(600_000) } });
    expect(issueAt(issues, 'files.big')).toMatchObject({ code: 'too_big', message: expect.stringContaining('1 MiB') });
    expect(specOf({ ...minimal, files: { ok: 'a'.repeat(1024 * 1024) } }).files['ok']).toHaveLength(1024 * 1024);
  });
});

describe('parseCampaignSpec: metrics and telemetry', () => {
  it('defaults reduce and source', () => {
    expect(specOf({ ...minimal, metrics: [{ name: 'sps', regex: 'sps=([0-9.]+)' }] }).metrics).toEqual([
      { name: 'sps', regex: 'sps=([0-9.]+)', reduce: 'last', source: 'stdout', work: false },
    ]);
  });

  it('requires a capture group except for count', () => {
    expect(issueAt(issuesOf({ ...minimal, metrics: [{ name: 'm', regex: 'step' }] }), 'metrics[0].regex').message).toMatch(/capture group/);
    expect(specOf({ ...minimal, metrics: [{ name: 'm', regex: 'step', reduce: 'count' }] }).metrics[0]?.reduce).toBe('count');
    expect(specOf({ ...minimal, metrics: [{ name: 'm', regex: '(?:a)(?<v>[0-9]+)' }] }).metrics).toHaveLength(1);
  });

  it('refuses a regex that does not compile, with RE2’s reason', () => {
    expect(issueAt(issuesOf({ ...minimal, metrics: [{ name: 'm', regex: '([0-9]' }] }), 'metrics[0].regex')).toEqual({
      path: 'metrics[0].regex', code: 'invalid_regex', message: 'RE2 syntax: missing closing ): `([0-9]`',
    });
  });

  it('refuses what RE2 cannot express, at the metric’s path, saying what to write instead', () => {
    const issues = issuesOf({
      ...minimal,
      metrics: [
        { name: 'ok', regex: 'v=([0-9])' },
        { name: 'ahead', regex: '([0-9.]+)(?= ms)' },
        { name: 'behind', regex: '(?<=loss: )([0-9.]+)' },
        { name: 'again', regex: '(\\w+) \\1=([0-9]+)' },
      ],
    });
    expect(issues).toEqual([
      { path: 'metrics[1].regex', code: 'invalid_regex', message: expect.stringMatching(/^RE2 syntax: lookahead \(\?=…\) and \(\?!…\) is not supported; match the text around the value/) },
      { path: 'metrics[2].regex', code: 'invalid_regex', message: expect.stringMatching(/^RE2 syntax: lookbehind \(\?<=…\) and \(\?<!…\) is not supported; /) },
      { path: 'metrics[3].regex', code: 'invalid_regex', message: expect.stringMatching(/^RE2 syntax: backreferences \(\\1, \\k<name>\) are not supported; /) },
    ]);
  });

  it('takes a nested repetition, which RE2 matches in linear time', () => {
    expect(specOf({ ...minimal, metrics: [{ name: 'evil', regex: '^(a+)+$', reduce: 'count' }] }).metrics).toHaveLength(1);
  });

  it('judges the regexes even when other fields are wrong', () => {
    const issues = issuesOf({ ...minimal, repetitions: 0, metrics: [{ name: 'm', regex: 'a(?!b)(c)' }] });
    expect(issues.map((i) => i.path).sort()).toEqual(['metrics[0].regex', 'repetitions']);
  });

  it('refuses duplicate metric names, pointing at the second', () => {
    const metrics = [
      { name: 'm', regex: '(a)' },
      { name: 'n', regex: '(b)' },
      { name: 'm', regex: '(c)' },
    ];
    expect(issueAt(issuesOf({ ...minimal, metrics }), 'metrics[2].name').message).toBe(
      'metric "m" is already defined at metrics[0]; metric names must be unique',
    );
  });

  it('refuses an unknown reduction and more than 64 metrics', () => {
    expect(issueAt(issuesOf({ ...minimal, metrics: [{ name: 'm', regex: '(a)', reduce: 'median' }] }), 'metrics[0].reduce').message).toMatch(
      /must be one of "last", "first"/,
    );
    const many = Array.from({ length: 65 }, (_, i) => ({ name: `m${i}`, regex: '(a)' }));
    expect(issueAt(issuesOf({ ...minimal, metrics: many }), 'metrics').message).toMatch(/at most 64 values/);
  });

  it('bounds the telemetry interval and idle baseline', () => {
    const issues = issuesOf({ ...minimal, telemetry: { intervalMs: 5, idleBaselineS: 3601 } });
    expect(issueAt(issues, 'telemetry.intervalMs').message).toBe('must be at least 10, got 5');
    expect(issueAt(issues, 'telemetry.idleBaselineS').message).toBe('must be at most 3600, got 3601');
  });

  it('takes network interface names and prefixes for the agents, and refuses anything a shell would read', () => {
    expect(CampaignSpec.parse({ ...minimal, telemetry: { netInterfaces: ['hsn*', 'ib0', 'eth0.100'] } }).telemetry.netInterfaces).toEqual(['hsn*', 'ib0', 'eth0.100']);
    const issues = issuesOf({ ...minimal, telemetry: { netInterfaces: ['eth0', '$(reboot)', 'a*b'] } });
    expect(issueAt(issues, 'telemetry.netInterfaces[1]').message).toMatch(/^must be a network interface name/);
    expect(issueAt(issues, 'telemetry.netInterfaces[2]').message).toMatch(/^must be a network interface name/);
    expect(issueAt(issuesOf({ ...minimal, telemetry: { netInterfaces: [] } }), 'telemetry.netInterfaces').message).toBe('must have at least one value');
  });
});

describe('parseCampaignSpec: rules across fields', () => {
  it('refuses a parameter defined in parameters and in a zip group', () => {
    const issue = issueAt(issuesOf({ ...minimal, parameters: { mb: [1, 2] }, zip: [{ mb: [1], sl: [2] }] }), 'zip[0].mb');
    expect(issue).toMatchObject({ code: 'parameter_redefined', message: expect.stringContaining('"mb" is already defined in parameters') });
  });

  it('refuses a parameter defined in two zip groups', () => {
    const issue = issueAt(issuesOf({ ...minimal, zip: [{ a: [1], b: [2] }, { c: [1], a: [3] }] }), 'zip[1].a');
    expect(issue.message).toContain('"a" is already defined in zip[0]');
  });

  it('refuses zip lists of unequal length, giving every length', () => {
    const issue = issueAt(issuesOf({ ...minimal, zip: [{ mb: [8, 4, 2], seq: [4096, 8192] }] }), 'zip[0]');
    expect(issue).toMatchObject({ code: 'zip_length_mismatch' });
    expect(issue.message).toContain('mb: 3, seq: 2');
  });

  it('refuses duplicate values in an axis, comparing canonical strings', () => {
    const issue = issueAt(issuesOf({ ...minimal, parameters: { sp: [1, 2, '1'] } }), 'parameters.sp[2]');
    expect(issue).toMatchObject({ code: 'duplicate_value' });
    expect(issue.message).toContain('value "1" duplicates parameters.sp[0]');
    expect(issueAt(issuesOf({ ...minimal, parameters: { f: [true, 'true'] } }), 'parameters.f[1]').code).toBe('duplicate_value');
    expect(issueAt(issuesOf({ ...minimal, parameters: { x: [1, 1.0] } }), 'parameters.x[1]').code).toBe('duplicate_value');
  });

  it('allows repeated values within one zip list but not repeated positions', () => {
    expect(specOf({ ...minimal, zip: [{ mb: [8, 8], seq: [1, 2] }] }).zip).toHaveLength(1);
    const issue = issueAt(issuesOf({ ...minimal, zip: [{ mb: [8, 4, 8], seq: [1, 2, 1] }] }), 'zip[0]');
    expect(issue.message).toBe('position 2 (mb=8, seq=1) duplicates position 0; each position of a zip group must be a different combination');
  });

  it('refuses an exclude naming an undefined parameter, listing the defined ones', () => {
    const issue = issueAt(issuesOf({ ...minimal, parameters: { a: [1], b: [2] }, zip: [{ c: [3] }], exclude: [{ foo: 1 }] }), 'exclude[0].foo');
    expect(issue).toEqual({ path: 'exclude[0].foo', code: 'unknown_parameter', message: '"foo" is not a parameter; defined: a, b, c' });
  });

  it('refuses an exclude value that is not among the parameter values, listing them', () => {
    const issues = issuesOf({ ...minimal, parameters: { sp: [1, 2, 4], o: ['none', 'cpu'] }, exclude: [{ sp: 8 }, { o: ['cpu', 'gpu'] }] });
    expect(issueAt(issues, 'exclude[0].sp')).toEqual({
      path: 'exclude[0].sp',
      code: 'exclude_never_matches',
      message: 'value 8 is not one of the values of sp (1, 2, 4), so this exclude can never match',
    });
    expect(issueAt(issues, 'exclude[1].o[1]').message).toContain('value "gpu" is not one of the values of o ("none", "cpu")');
  });

  it('matches exclude values canonically', () => {
    expect(specOf({ ...minimal, parameters: { sp: [1, 2] }, exclude: [{ sp: '1' }] }).exclude).toEqual([{ sp: '1' }]);
  });

  it('refuses placeholders that name neither a parameter nor a built-in, in run and in files', () => {
    const issues = issuesOf({
      ...minimal,
      parameters: { a: [1], b: [2] },
      run: 'echo {{a}} {{foo}} {{ run_id }} {{campaign_id}} {{repetition}} {{foo}}',
      files: { 'ds_config.json': '{"x": "{{bar}}", "y": {{b}}}' },
    });
    expect(issueAt(issues, 'run')).toEqual({
      path: 'run',
      code: 'unknown_placeholder',
      message: 'template uses {{foo}}, which is not a parameter; defined: a, b; built-ins: run_id, campaign_id, repetition',
    });
    expect(issueAt(issues, 'files["ds_config.json"]').message).toContain('template uses {{bar}}');
  });

  it('accepts zip parameters and built-ins in templates', () => {
    expect(specOf({ ...minimal, zip: [{ mb: [1] }], run: 'x {{mb}} {{run_id}}' }).run).toBe('x {{mb}} {{run_id}}');
  });

  it('refuses unclosed and malformed placeholders', () => {
    const issues = issuesOf({ ...minimal, run: 'line1\necho {{a', files: { f: '{{ not ok }}' } });
    expect(issueAt(issues, 'run')).toMatchObject({ code: 'template_syntax', message: expect.stringContaining('unclosed "{{" at line 2, column 6') });
    expect(issueAt(issues, 'files.f').message).toContain('"{{ not ok }}" at line 1, column 1 is not a placeholder');
  });

  it('refuses parameters named like a built-in', () => {
    const issues = issuesOf({ ...minimal, parameters: { run_id: [1] }, zip: [{ repetition: [1] }] });
    expect(issueAt(issues, 'parameters.run_id')).toMatchObject({ code: 'reserved_name', message: expect.stringContaining('"run_id" is a built-in') });
    expect(issueAt(issues, 'zip[0].repetition').code).toBe('reserved_name');
  });
});

describe('parseCampaignSpec: every problem at once', () => {
  it('reports field errors and cross-field errors in one answer', () => {
    const issues = issuesOf({
      name: 'x',
      cluster: 'local',
      repetitions: 0,
      parameters: { msg: ['ok', '$(touch /tmp/x)'], sp: [1, 1] },
      zip: [{ sp: [2] }],
      exclude: [{ nope: 1 }],
      resources: { time: '90min' },
      slurm: { chdir: '/' },
      run: 'echo {{msg}} {{foo}}',
    });
    expect(issues.map((i) => i.path).sort()).toEqual(
      [
        'repetitions',
        'parameters.msg[1]',
        'parameters.sp[1]',
        'zip[0].sp',
        'exclude[0].nope',
        'resources.time',
        'slurm.chdir',
        'run',
      ].sort(),
    );
  });

  it('skips "not a parameter" claims while a broken field hides parameter names', () => {
    const issues = issuesOf({ ...minimal, parameters: { a: [1] }, zip: [5], run: 'echo {{b}}', exclude: [{ b: 1 }] });
    expect(issues.map((i) => i.path)).toEqual(['zip[0]']);
  });

  it('still checks names when only a value is broken', () => {
    const issues = issuesOf({ ...minimal, parameters: { a: [1, 'b c'] }, run: 'echo {{a}} {{z}}', exclude: [{ a: 7 }] });
    expect(issues.map((i) => i.path)).toEqual(['parameters.a[1]', 'run']);
  });

  it('does not report cluster or run as missing when they are present but invalid', () => {
    const issues = issuesOf({ name: 'x', cluster: 'BAD', run: '' });
    expect(issues).toHaveLength(2);
    expect(issueAt(issues, 'cluster').message).toContain('not a cluster name');
    expect(issueAt(issues, 'run').message).toBe('must not be empty');
  });

  it('refuses a spec that is not an object', () => {
    for (const input of [null, [], 'name: x', 42]) {
      expect(issuesOf(input)).toEqual([{ path: '(root)', code: 'invalid_type', message: expect.stringMatching(/^expected an object, got/) }]);
    }
  });
});

describe('CampaignSpec schema', () => {
  it('applies the cross-field rules when used directly', () => {
    const result = CampaignSpec.safeParse({ ...minimal, parameters: { a: [1] }, run: 'echo {{b}}' });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]).toMatchObject({ path: ['run'], params: { code: 'unknown_placeholder' } });
  });

  it('agrees with parseCampaignSpec on valid input', () => {
    const input = { ...minimal, parameters: { a: [1, 2] }, run: 'echo {{a}}' };
    expect(CampaignSpec.parse(input)).toEqual(specOf(input));
  });

  it('converts to JSON Schema for the OpenAPI document', () => {
    const schema = z.toJSONSchema(CampaignSpec, { io: 'input' }) as { properties: Record<string, unknown>; required?: string[] };
    expect(Object.keys(schema.properties)).toContain('parameters');
    expect(schema.required).toEqual(['name']);
    expect(JSON.stringify(schema)).toContain(JSON.stringify('^[A-Za-z0-9._,:=+/@%^-]{1,256}$'));
  });

  it('round-trips: a parsed spec parses to itself', () => {
    const spec = specOf({ ...minimal, parameters: { a: [1, 'x', true] }, zip: [{ b: [1, 2], c: [3, 4] }], exclude: [{ a: 1, b: [1] }] });
    expect(parseCampaignSpec(spec)).toEqual({ ok: true, spec });
  });
});
