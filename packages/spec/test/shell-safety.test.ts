import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { renderTemplate, SAFE_VALUE } from '../src';

// The claim behind SAFE_VALUE, checked against a real bash: a safe value substituted raw into a
// script comes out as itself whether it sits unquoted, double-quoted, single-quoted or in a
// heredoc — nothing expands, splits, globs or runs.
describe('SAFE_VALUE in bash', () => {
  const contexts = [
    'printf "%s\\n" {{v}}',
    'printf "%s\\n" "{{v}}"',
    "printf '%s\\n' '{{v}}'",
    'x={{v}}; printf "%s\\n" "$x"',
    'cat <<EOF\n{{v}}\nEOF',
  ];

  it('round-trips in every quoting context', () => {
    const values = fc.sample(fc.stringMatching(SAFE_VALUE), { numRuns: 150, seed: 42 });
    // Values made only of the characters most likely to surprise a shell.
    values.push('%', '^', '-n', '--', '=', '+', '@', ':', ',', '/', '.', '..', 'a=b', '-e', '%1', '^x^y', 'a,b', 'x:y=z');
    const script = values.flatMap((v) => contexts.map((c) => renderTemplate(c, { v }))).join('\n');
    const out = execFileSync('bash', ['--norc', '--noprofile', '-c', script], {
      encoding: 'utf8',
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    });
    expect(out.split('\n').slice(0, -1)).toEqual(values.flatMap((v) => contexts.map(() => v)));
  });
});
