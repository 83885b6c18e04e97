import { spawnSync } from 'node:child_process';
import path from 'node:path';

// scripts/gpu-check.py runs only where a real GPU is (the device machine some sessions are lent):
// here it is kept from rotting — it compiles, and it parses its options — until one is.
const script = path.resolve(__dirname, '..', '..', 'scripts', 'gpu-check.py');

describe('the prepared GPU check (scripts/gpu-check.py)', () => {
  test('compiles and answers --help without a GPU', () => {
    // Parsed, not byte-compiled: nothing is written beside the script.
    expect(spawnSync('python3', ['-B', '-c', 'import ast, sys; ast.parse(open(sys.argv[1]).read())', script], { encoding: 'utf8' }).status).toBe(0);
    const help = spawnSync('python3', ['-B', script, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--set-power-limit');
  });
});
