import { MAX_LOG_PHASES } from '../src';
import { issueAt, issuesOf, minimal, specOf } from './helpers';

const begin = '^\\[(?<t>[^\\]]+)\\] step begins';
const end = '^\\[(?<t>[^\\]]+)\\] step ends';
const withPhases = (phases: unknown) => ({ ...minimal, phases });

describe('phases: the spec section', () => {
  it('keeps begin/end phases and step counters as written, and stays absent when not given', () => {
    const phases = [
      { name: 'optimizer', begin, end },
      { name: 'step', step: 'global_step=(?<n>\\d+) .* time=(?<t>[0-9.]+)', timeFormat: 'unix' },
      { name: 'io/ckpt.save', begin: 'save (?<t>\\S+) start', end: 'save (?<t>\\S+) done', timeFormat: 'iso' },
    ];
    expect(specOf(withPhases(phases)).phases).toEqual(phases);
    expect(specOf(minimal)).not.toHaveProperty('phases');
    expect(specOf(withPhases([])).phases).toEqual([]);
  });

  it('wants a named group t in every regex, at the regex’s own path', () => {
    const issues = issuesOf(withPhases([{ name: 'a', begin: '^begin (\\S+)', end }, { name: 'b', step: 'step (?<time>\\d+)' }]));
    expect(issueAt(issues, 'phases[0].begin')).toEqual({
      path: 'phases[0].begin',
      code: 'invalid_regex',
      message: "needs a named group (?<t>…) around the line's timestamp, e.g. '^\\[(?<t>[^\\]]+)\\] step begins'",
    });
    expect(issueAt(issues, 'phases[1].step').code).toBe('invalid_regex');
    expect(issues).toHaveLength(2);
  });

  it('names a regex that does not compile, with RE2’s reason', () => {
    const issue = issueAt(issuesOf(withPhases([{ name: 'a', begin: '(?<t>[', end }])), 'phases[0].begin');
    expect(issue).toEqual({ path: 'phases[0].begin', code: 'invalid_regex', message: 'RE2 syntax: missing closing ]: `[`' });
  });

  it('refuses what RE2 cannot express at the regex’s own path, and takes nested repetitions, which RE2 matches in linear time', () => {
    const issues = issuesOf(withPhases([
      { name: 'a', begin: '^(?<t>\\S+)(?= begins)', end },
      { name: 'b', begin, end: '(?<!x)(?<t>\\d+) ends' },
      { name: 'c', step: '(?<t>\\d+) \\k<t>' },
      { name: 'd', step: '^(?<t>\\d+) (a+)+$' },
    ]));
    expect(issues).toEqual([
      { path: 'phases[0].begin', code: 'invalid_regex', message: expect.stringMatching(/^RE2 syntax: lookahead /) },
      { path: 'phases[1].end', code: 'invalid_regex', message: expect.stringMatching(/^RE2 syntax: lookbehind /) },
      { path: 'phases[2].step', code: 'invalid_regex', message: expect.stringMatching(/^RE2 syntax: backreferences /) },
    ]);
    // Python's spelling of a named group is RE2's too.
    expect(specOf(withPhases([{ name: 's', step: 'step (?P<t>\\d+)' }])).phases).toHaveLength(1);
  });

  it('bounds each regex like a metric’s', () => {
    const issue = issueAt(issuesOf(withPhases([{ name: 'a', begin: `(?<t>x)${'a'.repeat(1000)}`, end }])), 'phases[0].begin');
    expect(issue).toEqual({ path: 'phases[0].begin', code: 'too_big', message: 'must be at most 1000 characters long (got 1007 characters)' });
    expect(issueAt(issuesOf(withPhases([{ name: 'a', begin: '', end }])), 'phases[0].begin').message).toBe('must not be empty');
  });

  it('takes begin with end, or step, never both or neither', () => {
    expect(issueAt(issuesOf(withPhases([{ name: 'a', begin }])), 'phases[0].end')).toEqual({
      path: 'phases[0].end', code: 'required', message: 'required with begin: the regex of the line that closes the phase',
    });
    expect(issueAt(issuesOf(withPhases([{ name: 'a', end }])), 'phases[0].begin')).toEqual({
      path: 'phases[0].begin', code: 'required', message: 'required with end: the regex of the line that opens the phase',
    });
    expect(issueAt(issuesOf(withPhases([{ name: 'a', begin, end, step: begin }])), 'phases[0].step')).toEqual({
      path: 'phases[0].step',
      code: 'invalid_phase',
      message: 'a phase has either begin and end (a span) or step (instants), not both; make the step counter an entry of its own',
    });
    expect(issueAt(issuesOf(withPhases([{ name: 'a' }])), 'phases[0]')).toEqual({
      path: 'phases[0]',
      code: 'invalid_phase',
      message: 'needs begin and end regexes (the lines that open and close the phase) or a step regex (the line that ends each step)',
    });
  });

  it('wants mark names, unique, and a known time format', () => {
    expect(issueAt(issuesOf(withPhases([{ name: 'two words', begin, end }])), 'phases[0].name')).toEqual({
      path: 'phases[0].name', code: 'invalid_format', message: '"two words" is not a phase name: use 1-64 letters, digits and _ . : / -',
    });
    expect(issueAt(issuesOf(withPhases([{ name: 'a', begin, end }, { name: 'b', begin, end }, { name: 'a', step: begin }])), 'phases[2].name')).toEqual({
      path: 'phases[2].name', code: 'duplicate_phase', message: 'phase "a" is already defined at phases[0]; give each entry its own name',
    });
    expect(issueAt(issuesOf(withPhases([{ name: 'a', begin, end, timeFormat: 'epoch' }])), 'phases[0].timeFormat').message).toBe(
      'must be one of "iso", "unix", "unix_ms"; got "epoch"',
    );
    expect(issueAt(issuesOf(withPhases([{ name: 'a', begin, end, regex: begin }])), 'phases[0].regex').code).toBe('unrecognized_keys');
  });

  it(`has at most ${MAX_LOG_PHASES} entries`, () => {
    const many = Array.from({ length: MAX_LOG_PHASES + 1 }, (_, i) => ({ name: `p${i}`, step: '(?<t>\\d+)' }));
    expect(issueAt(issuesOf(withPhases(many)), 'phases')).toEqual({ path: 'phases', code: 'too_big', message: 'must have at most 32 values (got 33 values)' });
    expect(specOf(withPhases(many.slice(0, MAX_LOG_PHASES))).phases).toHaveLength(MAX_LOG_PHASES);
  });
});
