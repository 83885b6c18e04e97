// A campaign cannot stage a file over one of erg's names in the run directory (the telemetry spool folder included).
import { startTestApi, type TestApi } from './helpers';

describe('POST /v1/campaigns with a reserved file name (Postgres + Redis)', () => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => {
    await t.close();
  });

  test('files.telemetry is a 400 naming it', async () => {
    const res = await t.app.inject({
      method: 'POST', url: '/v1/campaigns', headers: { authorization: `Bearer ${t.token}` },
      payload: { name: 'x', cluster: 'nowhere', parameters: { n: [1] }, run: 'true', files: { telemetry: 'overwrite the spool' } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.issues).toEqual([expect.objectContaining({ path: 'files.telemetry', code: 'reserved_name' })]);
  });
});
