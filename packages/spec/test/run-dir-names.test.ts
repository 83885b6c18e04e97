import { formatPath, RESERVED_FILE_NAMES, RESERVED_FILE_PREFIXES, RUN_DIR_FILES } from '../src';
import { issueAt, issuesOf, minimal } from './helpers';

describe('the names erg uses in a run directory are reserved in files', () => {
  test('a file named telemetry (the agents\' spool folder) is refused at files.telemetry', () => {
    const issue = issueAt(issuesOf({ ...minimal, files: { telemetry: 'x' } }), 'files.telemetry');
    expect(issue.code).toBe('reserved_name');
    expect(issue.message).toContain('"telemetry"');
  });

  test.each(Object.values(RUN_DIR_FILES))('%s is refused', (name) => {
    expect(issueAt(issuesOf({ ...minimal, files: { [name]: 'x' } }), formatPath(['files', name])).code).toBe('reserved_name');
  });

  test('the run token and the idle baseline are in the list, and every name is reserved by name or prefix', () => {
    expect(Object.values(RUN_DIR_FILES)).toEqual(expect.arrayContaining(['erg.token', 'erg.idle', 'telemetry', 'job.sh', 'stdout.log']));
    for (const name of Object.values(RUN_DIR_FILES)) {
      expect((RESERVED_FILE_NAMES as readonly string[]).includes(name) || RESERVED_FILE_PREFIXES.some((p) => name.startsWith(p))).toBe(true);
    }
  });
});
