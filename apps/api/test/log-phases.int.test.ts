// A campaign's phases and metrics (RE2 regexes on its logs) are checked when it is created: a regex
// the scheduler could not use is a 400 naming it, before any run exists.
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

  test('a regex without (?<t>…), one that does not compile and one RE2 cannot express are each a 400 at their path', async () => {
    const res = await post([
      { name: 'optimizer', begin: '^\\[([^\\]]+)\\] step begins', end: '^\\[(?<t>[^\\]]+)\\] step ends' },
      { name: 'step', step: '(?<t>[0-9.' },
      { name: 'io', begin: '^(?<t>\\S+)(?= saving)', end: '^(?<t>\\S+) done' },
    ]);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('ERG_VALIDATION');
    expect(res.json().error.issues).toEqual([
      { path: 'phases[0].begin', code: 'invalid_regex', message: expect.stringContaining("needs a named group (?<t>…) around the line's timestamp") },
      { path: 'phases[1].step', code: 'invalid_regex', message: expect.stringMatching(/^RE2 syntax: missing closing \]: /) },
      { path: 'phases[2].begin', code: 'invalid_regex', message: expect.stringMatching(/^RE2 syntax: lookahead \(\?=…\) and \(\?!…\) is not supported; /) },
    ]);
  });

  test('metrics too: a lookbehind and a backreference are each a 400 at metrics[i].regex; a nested repetition, linear in RE2, is taken', async () => {
    const res = await t.app.inject({
      method: 'POST', url: '/v1/campaigns', headers: { authorization: `Bearer ${t.token}` },
      payload: {
        name: 'x', cluster: 'nowhere', run: 'true',
        metrics: [
          { name: 'evil', regex: '^(a+)+$', reduce: 'count' },
          { name: 'behind', regex: '(?<=loss=)([0-9.]+)' },
          { name: 'again', regex: '(a)\\1=([0-9]+)' },
        ],
      },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.issues).toEqual([
      { path: 'metrics[1].regex', code: 'invalid_regex', message: expect.stringMatching(/^RE2 syntax: lookbehind /) },
      { path: 'metrics[2].regex', code: 'invalid_regex', message: expect.stringMatching(/^RE2 syntax: backreferences /) },
    ]);
  });
});
