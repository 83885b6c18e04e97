import { ERROR_CATALOG, ErgError, errorDefinition, type ErrorCode } from '../src';

class ExampleTimeoutError extends ErgError<'ERG_SSH_TIMEOUT'> {
  constructor(cause?: unknown) {
    super('ERG_SSH_TIMEOUT', 'command on h:22 did not finish within 10 ms: sleep 1', { cause });
  }
}

describe('ErgError', () => {
  it('takes its status and retryable from the catalog', () => {
    const err = new ErgError('ERG_SSH_TIMEOUT', 'late');
    expect(err).toMatchObject({ code: 'ERG_SSH_TIMEOUT', status: 504, retryable: true, message: 'late' });
    expect(new ErgError('ERG_VALIDATION', 'bad')).toMatchObject({ status: 400, retryable: false });
  });

  it('is named after its class and keeps its cause', () => {
    const cause = new Error('socket hang up');
    const err = new ExampleTimeoutError(cause);
    expect(err).toBeInstanceOf(ErgError);
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('ExampleTimeoutError');
    expect(err.cause).toBe(cause);
    expect(new ExampleTimeoutError()).not.toHaveProperty('cause');
  });

  it("takes one of the code's other statuses when the thrower picks it", () => {
    expect(new ErgError('ERG_BAD_URL', 'too long', { status: 414 }).status).toBe(414);
    expect(new ErgError('ERG_BAD_URL', 'bad encoding').status).toBe(400);
  });

  it("has no status where none fits, and a client's view of an unknown code is not retryable", () => {
    expect(new ErgError('ERG_AGENT_CONFIG', 'no --run-id').status).toBeNull();
    const view = new ErgError<string>('ERG_FROM_A_NEWER_API', 'something new', { status: 418 });
    expect(view).toMatchObject({ status: 418, retryable: false });
    expect(errorDefinition('ERG_FROM_A_NEWER_API')).toBeUndefined();
    expect(errorDefinition('toString')).toBeUndefined();
  });
});

describe('ERROR_CATALOG', () => {
  const entries = Object.entries(ERROR_CATALOG) as [ErrorCode, (typeof ERROR_CATALOG)[ErrorCode]][];

  it.each(entries)('%s has an HTTP error status (or none), a surface and a one-sentence meaning', (code, definition) => {
    const statuses = [definition.status, ...('alsoStatus' in definition ? definition.alsoStatus : [])];
    for (const status of statuses) if (status !== null) expect(status >= 400 && status <= 599).toBe(true);
    expect(new Set(statuses).size).toBe(statuses.length);
    if (definition.surface === 'response') expect(definition.status).not.toBeNull();
    expect(definition.meaning).toMatch(/^\S.*\S$/);
    expect(definition.meaning).not.toMatch(/\.$|\.\s+[A-Z]|\n/);
    expect(code).toMatch(/^(ERG_[A-Z][A-Z0-9_]*[A-Z0-9]|FST_ERR_[A-Z_]+|[a-z_]+)$/);
  });

  it("lists erg's own codes as ERG_*: only Fastify's pass-throughs and the spec's issue codes differ", () => {
    const others = entries.map(([code]) => code).filter((code) => !code.startsWith('ERG_'));
    expect(others.every((code) => code.startsWith('FST_ERR_') || /^[a-z_]+$/.test(code))).toBe(true);
    expect(others.filter((code) => !code.startsWith('FST_ERR_')).sort()).toEqual(['invalid_slurm_time', 'template_error']);
  });
});
