import { z } from 'zod';
import { formatIssue, formatPath, humanErrorMap, issuesFromZodError, parseWithIssues, SpecIssue } from '../src';

describe('formatPath', () => {
  it.each<[PropertyKey[], string]>([
    [[], '(root)'],
    [['resources', 'time'], 'resources.time'],
    [['zip', 0, 'mb'], 'zip[0].mb'],
    [['parameters', 'msg', 1], 'parameters.msg[1]'],
    [['files', 'ds_config.json'], 'files["ds_config.json"]'],
    [['files', 'a"b'], 'files["a\\"b"]'],
    [[0], '[0]'],
    [['bad-name'], '["bad-name"]'],
  ])('%j → %s', (path, text) => expect(formatPath(path)).toBe(text));
});

describe('humanErrorMap through parseWithIssues', () => {
  const schema = z.strictObject({
    n: z.number(),
    i: z.int().min(1).max(10),
    s: z.string().min(1).max(3),
    a: z.array(z.string()).min(1).max(2),
    e: z.enum(['slurm', 'import']),
    o: z.object({ x: z.string() }).optional(),
  });
  const valid = { n: 1, i: 2, s: 'ab', a: ['x'], e: 'slurm' };
  const messageAt = (input: unknown, path: string) => {
    const result = parseWithIssues(schema, input);
    if (result.ok) throw new Error('expected issues');
    return result.issues.find((i) => i.path === path);
  };

  it('says "required" for a missing field, with code required', () => {
    const { n: _, ...rest } = valid;
    expect(messageAt(rest, 'n')).toEqual({ path: 'n', message: 'required', code: 'required' });
  });

  it('names the expected and the actual type', () => {
    expect(messageAt({ ...valid, n: 'x' }, 'n')?.message).toBe('expected a number, got string');
    expect(messageAt({ ...valid, o: [] }, 'o')?.message).toBe('expected an object, got array');
    expect(messageAt({ ...valid, o: null }, 'o')?.message).toBe('expected an object, got null');
    expect(messageAt({ ...valid, i: 1.5 }, 'i')?.message).toBe('expected an integer, got 1.5');
  });

  it('states bounds in words', () => {
    expect(messageAt({ ...valid, i: 0 }, 'i')?.message).toBe('must be at least 1, got 0');
    expect(messageAt({ ...valid, i: 11 }, 'i')?.message).toBe('must be at most 10, got 11');
    expect(messageAt({ ...valid, s: '' }, 's')?.message).toBe('must not be empty');
    expect(messageAt({ ...valid, s: 'abcd' }, 's')?.message).toBe('must be at most 3 characters long (got 4 characters)');
    expect(messageAt({ ...valid, a: [] }, 'a')?.message).toBe('must have at least one value');
    expect(messageAt({ ...valid, a: ['x', 'y', 'z'] }, 'a')?.message).toBe('must have at most 2 values (got 3 values)');
  });

  it('lists the allowed options and suggests the likely one', () => {
    expect(messageAt({ ...valid, e: 'slrum' }, 'e')?.message).toBe('must be one of "slurm", "import"; got "slrum" (did you mean "slurm"?)');
    expect(messageAt({ ...valid, e: 'zzzzzz' }, 'e')?.message).toBe('must be one of "slurm", "import"; got "zzzzzz"');
  });

  it('points at a single unknown field and suggests the field meant', () => {
    expect(messageAt({ ...valid, nn: 1 }, 'nn')).toEqual({
      path: 'nn',
      code: 'unrecognized_keys',
      message: 'unknown field "nn" (did you mean "n"?); allowed: n, i, s, a, e, o',
    });
  });

  it('reports several unknown fields together at the object', () => {
    expect(messageAt({ ...valid, p: 1, q: 2 }, '(root)')?.message).toBe('unknown fields "p", "q"; allowed: n, i, s, a, e, o');
  });

  it('returns the data when valid', () => {
    expect(parseWithIssues(schema, valid)).toEqual({ ok: true, data: valid });
  });

  it('keeps messages the schema set itself', () => {
    const custom = z.string().min(5, { error: 'too short for a key' });
    expect(parseWithIssues(custom, 'abc')).toEqual({ ok: false, issues: [{ path: '(root)', message: 'too short for a key', code: 'too_small' }] });
  });
});

describe('issuesFromZodError', () => {
  it('uses the code a custom issue carries in params', () => {
    const schema = z.string().superRefine((_, ctx) => ctx.addIssue({ code: 'custom', message: 'no', params: { code: 'my_code' } }));
    const result = schema.safeParse('x', { error: humanErrorMap });
    expect(result.success).toBe(false);
    if (!result.success) expect(issuesFromZodError(result.error)).toEqual([{ path: '(root)', message: 'no', code: 'my_code' }]);
  });

  it('produces values that match the SpecIssue schema', () => {
    const result = z.object({ a: z.number() }).safeParse({}, { error: humanErrorMap });
    if (result.success) throw new Error('expected failure');
    for (const issue of issuesFromZodError(result.error)) expect(SpecIssue.parse(issue)).toEqual(issue);
  });
});

describe('formatIssue', () => {
  it('prints path: message', () => {
    expect(formatIssue({ path: 'resources.time', message: 'bad', code: 'x' })).toBe('resources.time: bad');
  });
});
