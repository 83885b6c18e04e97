// createCampaign: a campaign's configurations and runs go in as array literals, one statement per
// CAMPAIGN_INSERT_CHUNK rows; what is read back must be exactly what was given, across chunks too.
import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import {
  CAMPAIGN_INSERT_CHUNK, countCampaignRunEvents, createCampaign, createDatabase, createProject, getCampaignSummary, listCampaignRuns,
  listConfigurationEnergies, type Database,
} from '@erg/db';
import { testCampaignSpec } from '@erg/db/testing';
import { campaignRunOrder } from '@erg/sweep';

describe('createCampaign', () => {
  let tdb: TestDatabase;
  let db: Database;
  let projectId: string;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    projectId = (await createProject(db, { name: 'create-campaign' })).id;
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  const store = (configurations: { key: string; parameters: Record<string, unknown> }[], repetitions: number) =>
    createCampaign(db, { name: 't', execution: 'import', clusterId: null, projectId, spec: testCampaignSpec(), specText: null, repetitions, configurations });

  test('stores keys and parameters that an array literal must quote exactly as given', async () => {
    const awkward = ['a"b', 'back\\slash', 'x,y', '{braces}', ' spaced ', 'NULL', '', 'ünï €', 'line\nbreak', '\\"both\\"'];
    const configurations = awkward.map((v, i) => ({ key: `v=${v};i=${i}`, parameters: { v, i, nested: { quote: '"', list: [v, null, true] } } }));
    const created = await store(configurations, 1);
    const stored = await listConfigurationEnergies(db, created.id);
    expect(stored.map(({ key, parameters, position }) => ({ key, parameters, position }))).toEqual(configurations.map((c, position) => ({ ...c, position })));
  });

  test(`a campaign of more than one chunk (${CAMPAIGN_INSERT_CHUNK} rows) is stored whole, in order, every run pending with its event`, async () => {
    const configs = CAMPAIGN_INSERT_CHUNK / 2 + 3;
    const created = await store(Array.from({ length: configs }, (_, i) => ({ key: `a=${i}`, parameters: { a: i } })), 2);
    const total = configs * 2;
    expect(created.runs).toHaveLength(total);
    expect((await getCampaignSummary(db, created.id))?.runCounts).toEqual({ pending: total });
    expect(await countCampaignRunEvents(db, created.id, 'pending')).toBe(total);
    // Across the chunk boundary: each run where createCampaign said, with its configuration and repetition.
    const { items } = await listCampaignRuns(db, created.id, { offset: CAMPAIGN_INSERT_CHUNK - 2, limit: 6 });
    expect(items.map((r) => ({ id: r.id, position: r.position, repetition: r.repetition, key: r.configurationKey }))).toEqual(
      created.runs.slice(CAMPAIGN_INSERT_CHUNK - 2, CAMPAIGN_INSERT_CHUNK + 4).map((r) => ({ id: r.id, position: r.position, repetition: r.repetition, key: r.configurationKey })),
    );
    // …and in the design's order (the seed drawn for this campaign): position p is the p-th run of campaignRunOrder.
    const order = [...campaignRunOrder(configs, 2, created.design)].slice(CAMPAIGN_INSERT_CHUNK - 2, CAMPAIGN_INSERT_CHUNK + 4);
    expect(items.map((r) => [r.configurationKey, r.repetition])).toEqual(order.map((o) => [`a=${o.configuration}`, o.repetition]));
  });
});
