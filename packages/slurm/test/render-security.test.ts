/**
 * The security rule of design.md, as properties: a parameter value either is refused (the spec,
 * and so the API, answers 400 naming the field; the renderer refuses too) or reaches the workload
 * as the literal string — it never runs. Scripts are really executed with bash.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { CampaignSpec, isSafeValue } from '@erg/spec';
import { renderJobScript, renderRunFiles, UnsafeParameterValueError } from '../src';
import { bash, renderInput, spec, tempDir } from './helpers';

const { dir, cleanup } = tempDir('erg-render-security-');
afterAll(cleanup);
const canary = path.join(dir, 'pwned');

/** Hostile fragments (each aimed at the canary), shell metacharacters, unicode. */
const fragment = fc.constantFrom(
  `$(touch ${canary})`,
  `\`touch ${canary}\``,
  `; touch ${canary}`,
  `&& touch ${canary}`,
  `| touch ${canary}`,
  `\ntouch ${canary}\n`,
  `'; touch ${canary}; '`,
  `"; touch ${canary}; "`,
  `\${IFS}touch\${IFS}${canary}`,
  '; rm -rf ~',
  '$HOME', '${v}', '*', '?', '~', '[a]', '{a,b}', '!!', '#', '\\', ' ', '\t', '"', "'", '<', '>',
  'é', 'Ω', '💥', '\u202e', '-n', '-e', '%s', '%n', 'a', 'Z', '0', '.', '..', '/', '=', ',', ':', '+', '@', '^', '_', '-',
);

const value = fc.oneof(
  // Accepted values: every character of SAFE_VALUE, including leading '-' and '%'.
  fc.stringMatching(/^[A-Za-z0-9._,:=+/@%^-]{1,40}$/),
  fc.array(fragment, { minLength: 1, maxLength: 6 }).map((parts) => parts.join('')),
  fc.string({ unit: 'binary', maxLength: 20 }),
);

/** `{{v}}` in every quoting context a run template may put it. */
const RUN_TEMPLATE = [
  "printf '%s\\n' {{v}}",
  "printf '%s\\n' \"{{v}}\"",
  "printf '%s\\n' '{{v}}'",
  'x={{v}}; printf \'%s\\n\' "$x"',
  'cat <<ERG~EOF',
  '{{v}}',
  'ERG~EOF',
  "cat <<'ERG~EOF'",
  '{{v}}',
  'ERG~EOF',
  '',
].join('\n');
const CONTEXTS = 6;

describe('a parameter value in run.sh', () => {
  it('is refused, or printed literally in every quoting context without running anything', () => {
    let accepted = 0;
    fc.assert(
      fc.property(value, (v) => {
        const input = renderInput({ parameters: { v }, spec: { ...spec(), run: RUN_TEMPLATE } });
        if (!isSafeValue(v)) {
          // The API validates specs with this schema: it answers 400 naming parameters.v.
          const parsed = CampaignSpec.safeParse({ name: 'x', cluster: 'local', parameters: { v: [v] }, run: 'echo {{v}}' });
          expect(parsed.success).toBe(false);
          expect(JSON.stringify(parsed.error?.issues.map((i) => i.path))).toContain('"parameters","v"');
          expect(() => renderRunFiles(input)).toThrow(UnsafeParameterValueError);
          return;
        }
        accepted++;
        const runSh = renderRunFiles(input).find((f) => f.name === 'run.sh');
        writeFileSync(path.join(dir, 'run.sh'), runSh?.content ?? '');
        const result = bash(['./run.sh'], { cwd: dir });
        expect(result.stderr.toString()).toBe('');
        expect(result.stdout.toString()).toBe(`${v}\n`.repeat(CONTEXTS));
        expect(existsSync(canary)).toBe(false);
      }),
      { numRuns: 200 },
    );
    // The property is only meaningful if both branches ran.
    expect(accepted).toBeGreaterThan(20);
  });

  it.each([`$(touch ${canary})`, '; rm -rf ~', '`id`', "it's", 'a b', 'line\nbreak', ''])('refuses %j', (v) => {
    expect(() => renderRunFiles(renderInput({ parameters: { v } }))).toThrow(UnsafeParameterValueError);
  });
});

describe('a parameter value exported by job.sh', () => {
  it('reaches the workload as ERG_PARAM_<name> exactly, for any string', () => {
    const runDir = path.join(dir, 'job');
    bash(['-c', `mkdir -p '${runDir}'`]);
    // run.sh prints what job.sh exported; job.sh itself is run as sbatch would, minus Slurm.
    writeFileSync(path.join(runDir, 'run.sh'), 'printf %s "$ERG_PARAM_v"; printf %s "$ERG_CONFIG_KEY" >&2\n');
    fc.assert(
      fc.property(value, (v) => {
        fc.pre(!v.includes('\0'));
        const job = renderJobScript(renderInput({ parameters: { v }, configKey: v, runDir }));
        writeFileSync(path.join(runDir, 'job.sh'), job);
        const result = bash(['./job.sh'], { cwd: runDir });
        expect(result.status).toBe(0);
        expect(readFileSync(path.join(runDir, 'stdout.log')).equals(Buffer.from(v))).toBe(true);
        expect(readFileSync(path.join(runDir, 'stderr.log')).equals(Buffer.from(v))).toBe(true);
        expect(existsSync(canary)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('records the workload window and exit code in erg.timing and exits with that code', () => {
    const runDir = path.join(dir, 'timing');
    bash(['-c', `mkdir -p '${runDir}'`]);
    writeFileSync(path.join(runDir, 'run.sh'), 'echo out; echo err >&2; exit 3\n');
    writeFileSync(path.join(runDir, 'job.sh'), renderJobScript(renderInput({ runDir })));
    const result = bash(['./job.sh'], { cwd: runDir });
    expect(result.status).toBe(3);
    const timing = readFileSync(path.join(runDir, 'erg.timing'), 'utf8');
    const m = /^start_ns=(\d+)\nend_ns=(\d+)\nexit_code=3\n$/.exec(timing);
    expect(m).not.toBeNull();
    expect(BigInt(m?.[2] ?? 0)).toBeGreaterThanOrEqual(BigInt(m?.[1] ?? 0));
    expect(readFileSync(path.join(runDir, 'stdout.log'), 'utf8')).toBe('out\n');
    expect(readFileSync(path.join(runDir, 'stderr.log'), 'utf8')).toBe('err\n');
    expect(existsSync(path.join(runDir, 'erg.timing.tmp'))).toBe(false);
  });
});
