import { generateKeyPairSync } from 'node:crypto';
import { startTestApi, type TestApi } from './helpers';

// POST /v1/campaigns with a GPU clock sweep through slurm.gpuFreq: accepted when every
// configuration's value is one Slurm takes, refused with the field and configuration otherwise.
const PRIVATE_KEY = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

describe('templated sbatch options at the API (Postgres + Redis)', () => {
  let t: TestApi;
  async function call(method: string, url: string, body?: unknown) {
    const res = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${t.token}` }, ...(body ? { payload: body as object } : {}) });
    return { status: res.statusCode, body: JSON.parse(res.body) };
  }
  beforeAll(async () => {
    t = await startTestApi();
    const cluster = { name: 'clocks', host: '127.0.0.1', port: 2222, user: 'root', privateKey: PRIVATE_KEY, hostKeySha256: 'SHA256:' + 'A'.repeat(43), workDir: '/var/lib/erg-test' };
    expect((await call('POST', '/v1/clusters', cluster)).status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
  });

  test('a clock sweep is accepted; one clock Slurm would refuse is a 400 naming slurm.gpuFreq and the configuration', async () => {
    const spec = (clocks: (number | string)[]) => ({ name: 'clock-sweep', cluster: 'clocks', parameters: { clock: clocks }, slurm: { gpuFreq: '{{clock}}' }, run: 'srun ./app' });
    expect((await call('POST', '/v1/campaigns', spec([1980, 1410]))).status).toBe(201);
    const bad = await call('POST', '/v1/campaigns', spec([1980, 'max']));
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues).toEqual([
      { path: 'slurm.gpuFreq', code: 'invalid_slurm_option', message: expect.stringMatching(/^configuration clock=max: "max" is not a --gpu-freq value/) },
    ]);
  });
});
