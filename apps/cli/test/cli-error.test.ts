import { ErgError } from '@erg/spec';
import { CliError, EXIT, usageError } from '@erg/cli';

describe('CliError', () => {
  test("is one of erg's errors, its code given by its exit code", () => {
    expect(new CliError('spec.yaml is not a valid campaign spec (2 problems):', EXIT.BAD)).toMatchObject({ code: 'ERG_CLI_BAD', exitCode: 1, status: null, retryable: false });
    expect(new CliError('suite nightly has not run yet', EXIT.UNDECIDED, { hint: 'start a run' })).toMatchObject({ code: 'ERG_CLI_UNDECIDED', exitCode: 2, hint: 'start a run' });
    const stopped = new CliError('stopped waiting; run r of suite s goes on', EXIT.INTERRUPTED);
    expect(stopped).toMatchObject({ code: 'ERG_CLI_INTERRUPTED', exitCode: 130, retryable: true, name: 'CliError' });
    expect(stopped).toBeInstanceOf(ErgError);
  });

  test('a usage error exits 2, undecided', () => {
    expect(usageError('--limit must be a positive integer', 'e.g. --limit 20')).toMatchObject({ code: 'ERG_CLI_UNDECIDED', exitCode: EXIT.UNDECIDED, hint: 'e.g. --limit 20', details: [] });
  });
});
