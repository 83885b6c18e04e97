import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '@erg/testkit';
import { erg, tempDir } from './helpers';

const examples = path.join(repoRoot(), 'examples');

describe('erg validate (offline)', () => {
  test.each(readdirSync(examples).filter((f) => f.endsWith('.yaml')))('examples/%s is valid', async (file) => {
    // No API configured and none reachable: validate must not need one.
    const out = await erg(['validate', path.join(examples, file)], { env: { ERG_API_URL: '', ERG_TOKEN: '' }, cwd: tempDir() });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.requests).toEqual([]);
    expect(out.stdout).toMatch(/valid\. (\d+ configurations? × [\d–]+ repetitions?( \(adaptive\))? = [\d,]+ (to [\d,]+ )?runs?|a search of [\d,]+ configurations: at most [\d,]+ runs?)/);
  });

  test('an adaptive campaign says its first runs and its most; a search its space and its budget', async () => {
    expect((await erg(['validate', path.join(examples, 'adaptive-cpu.yaml')])).stdout).toContain('3 configurations × 2–5 repetitions (adaptive) = 6 to 15 runs on cluster local');
    expect((await erg(['validate', path.join(examples, 'search-cpu.yaml')])).stdout).toContain('a search of 1,000 configurations: at most 12 runs, 1 run per configuration tried on cluster local');
  });

  test('the quickstart and the GH200 study expand as their comments say', async () => {
    expect((await erg(['validate', path.join(examples, 'quickstart.yaml')])).stdout).toContain('4 configurations × 5 repetitions = 20 runs on cluster local');
    expect((await erg(['validate', path.join(examples, 'gh200-deepspeed-energy.yaml')])).stdout).toContain('36 configurations × 3 repetitions = 108 runs');
  });

  test('a broken spec: every issue as path: message, exit 1', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'broken.yaml');
    writeFileSync(
      file,
      [
        'name: broken',
        'cluster: My_Cluster',
        'repetiton: 3',
        'parameters:',
        '  msg: ["ok", "$(touch /tmp/x)"]',
        'resources: { time: 30 }',
        'run: echo {{msg}} {{nope}}',
      ].join('\n'),
    );
    const out = await erg(['validate', file]);
    expect(out.code).toBe(1);
    expect(out.stdout).toBe('');
    expect(out.stderr).toMatch(/broken\.yaml is not a valid campaign spec \(\d+ problems\):/);
    expect(out.stderr).toMatch(/^ {2}cluster: "My_Cluster" is not a cluster name/m);
    expect(out.stderr).toMatch(/^ {2}repetiton: unknown field "repetiton" \(did you mean "repetitions"\?\)/m);
    expect(out.stderr).toMatch(/^ {2}parameters\.msg\[1\]: value "\$\(touch \/tmp\/x\)" contains/m);
    expect(out.stderr).toMatch(/^ {2}resources\.time: /m);
  });

  test('YAML syntax errors name the line; JSON files are read as JSON', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'bad.yaml'), 'name: x\nparameters: [1, 2\n');
    const yaml = await erg(['validate', 'bad.yaml'], { cwd: dir });
    expect(yaml.code).toBe(1);
    expect(yaml.stderr).toMatch(/\(root\): not valid YAML at line \d+, column \d+/);
    writeFileSync(path.join(dir, 'ok.json'), JSON.stringify({ name: 'j', cluster: 'local', parameters: { n: [1, 2, 3] }, run: 'echo {{n}}' }));
    expect((await erg(['validate', 'ok.json'], { cwd: dir })).stdout).toContain('3 configurations × 1 repetition = 3 runs');
  });

  test('the size limit can be set to the server\'s', async () => {
    const out = await erg(['validate', path.join(examples, 'gh200-deepspeed-energy.yaml'), '--max-runs', '100']);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/\(root\): the campaign has 108 runs/);
  });

  test('a missing file is a usage error (exit 2)', async () => {
    const out = await erg(['validate', '/nonexistent/spec.yaml']);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/cannot read \/nonexistent\/spec\.yaml: ENOENT/);
  });
});
