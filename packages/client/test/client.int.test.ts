import { generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { startTestApi, type TestApi } from '../../../apps/api/test/helpers';
import { createErgClient, ErgApiError, type ClusterCreate, type ErgClient } from '../src';

const CLUSTER: ClusterCreate = {
  name: 'alpha', host: '127.0.0.1', port: 2222, user: 'root',
  privateKey: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  hostKeySha256: 'SHA256:' + 'A'.repeat(43), defaultPartition: 'gh200', workDir: '/var/lib/erg-test',
};
const SPEC = {
  name: 'sweep', cluster: 'alpha', repetitions: 2,
  parameters: { offload: ['none', 'cpu'], sp: [1, 2] },
  resources: { nodes: 1, gpusPerNode: 4, time: '00:10:00' },
  run: 'echo offload={{offload}} sp={{sp}}',
};

describe('createErgClient against a listening API (Postgres + Redis)', () => {
  let t: TestApi;
  let client: ErgClient;

  beforeAll(async () => {
    t = await startTestApi();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    client = createErgClient({ baseUrl: `http://127.0.0.1:${port}`, token: t.token });
  });
  afterAll(async () => {
    await t?.close();
  });

  test('lists, creates and reads back clusters and campaigns', async () => {
    const empty = await client.GET('/v1/clusters');
    expect(empty.data?.items).toEqual([]);

    const cluster = await client.POST('/v1/clusters', { body: CLUSTER });
    expect(cluster.response.status).toBe(201);
    expect(cluster.data).toMatchObject({ name: 'alpha', host: '127.0.0.1', port: 2222 });

    const created = await client.POST('/v1/campaigns', { body: SPEC });
    expect(created.response.status).toBe(201);
    const id = created.data!.id;

    const read = await client.GET('/v1/campaigns/{id}', { params: { path: { id } } });
    expect(read.data).toMatchObject({ id, name: 'sweep' });
  });

  test('a rejected body throws ErgApiError with the issues per field', async () => {
    const bad = { ...CLUSTER, name: 'Bad Name', port: 70000 };
    const error = await client.POST('/v1/clusters', { body: bad }).then(
      () => { throw new Error('expected a 400'); },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ErgApiError);
    const apiError = error as ErgApiError;
    expect(apiError.status).toBe(400);
    expect(apiError.code).toMatch(/^ERG_/);
    expect(apiError.issues.map((i) => i.path).sort()).toEqual(expect.arrayContaining(['name', 'port']));
  });

  test('an unknown campaign is a 404 ErgApiError', async () => {
    await expect(client.GET('/v1/campaigns/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } }))
      .rejects.toMatchObject({ name: 'ErgApiError', status: 404 });
  });
});
