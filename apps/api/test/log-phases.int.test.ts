// A campaign's phases (regexes on its stdout.log) are checked when it is created: a regex the
// scheduler could not use is a 400 naming it, before any run exists.
import { startTestApi, type TestApi } from './helpers';

describe('POST /v1/campaigns with phases (Postgres + Redis)', () => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (phases: unknown) =>
    t.app.inject({
      method: 'POST', url: '/v1/campaigns', headers: { authorization: `Bearer ${t.token}` },
      payload: { name: 'x', cluster: 'nowhere', run: 'true', phases },
    });

  test('a regex without (?<t>…), one that does not compile and one that backtracks exponentially are each a 400 at their path', async () => {
    const res = await post([
      { name: 'optimizer', begin: '^\\[([^\\]]+)\\] step begins', end: '^\\[(?<t>[^\\]]+)\\] step ends' },
      { name: 'step', step: '(?<t>[0-9.' },
      { name: 'io', begin: '^(?<t>\\S+) (a+)+$', end: '^(?<t>\\S+) done' },
    ]);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('ERG_VALIDATION');
    expect(res.json().error.issues).toEqual([
      { path: 'phases[0].begin', code: 'invalid_regex', message: expect.stringContaining("needs a named group (?<t>…) around the line's timestamp") },
      { path: 'phases[1].step', code: 'invalid_regex', message: expect.stringMatching(/^not a valid regular expression: /) },
      { path: 'phases[2].begin', code: 'invalid_regex', message: expect.stringContaining('"(a+)+" repeats a repetition') },
    ]);
  });
});
