// A campaign row whose stored spec no longer parses (as an older erg, before a schema change, may
// have left it): every @erg/db read that returns the spec refuses it with ERG_STORED_SPEC_INVALID
// naming the campaign and the field at fault, never a default in its place; reads that need no spec
// (a page of campaigns) still work.
import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import {
  createCampaign, createDatabase, createProject, findCampaign, findCampaignPowerContext, findCampaignSpec, findRunDetail, findRunEnergyInputs,
  getCampaignSummary, listCampaignSummaries, StoredSpecInvalidError, type Database,
} from '@erg/db';
import { overwriteCampaignSpec, testCampaignSpec } from '@erg/db/testing';

describe('a stored spec that no longer parses', () => {
  let tdb: TestDatabase;
  let db: Database;
  let campaignId: string;
  let runId: string;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    const projectId = (await createProject(db, { name: 'stored-spec' })).id;
    const created = await createCampaign(db, {
      name: 'old', execution: 'import', clusterId: null, projectId, spec: testCampaignSpec({ power: { gpuPowerLimitW: 300 } }), specText: null,
      repetitions: 1, configurations: [{ key: 'a=1', parameters: { a: 1 } }],
    });
    campaignId = created.id;
    runId = created.runs[0]!.id;
    // Read back as stored, power block included.
    expect((await findCampaignSpec(db, campaignId))?.power).toEqual({ gpuPowerLimitW: 300 });
    // An older shape: the power block under a name the schema no longer has.
    const { power: _power, ...rest } = testCampaignSpec({ power: { gpuPowerLimitW: 300 } });
    await overwriteCampaignSpec(db, campaignId, { ...rest, powerSettings: { gpuPowerLimitW: 300 } });
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  test('every read that returns the spec refuses it, naming the campaign and the field', async () => {
    const reads: [string, () => Promise<unknown>][] = [
      ['findCampaign', () => findCampaign(db, campaignId)],
      ['findCampaignSpec', () => findCampaignSpec(db, campaignId)],
      ['getCampaignSummary', () => getCampaignSummary(db, campaignId)],
      ['findCampaignPowerContext', () => findCampaignPowerContext(db, campaignId)],
      ['findRunDetail', () => findRunDetail(db, runId)],
      ['findRunEnergyInputs', () => findRunEnergyInputs(db, runId)],
    ];
    for (const [name, read] of reads) {
      const err = await read().then(() => null, (e: unknown) => e);
      expect({ name, refused: err instanceof StoredSpecInvalidError }).toEqual({ name, refused: true });
      expect(err).toMatchObject({ code: 'ERG_STORED_SPEC_INVALID', campaignId, status: 500 });
      expect((err as Error).message).toContain(`campaign ${campaignId}`);
      expect((err as StoredSpecInvalidError).issues.map((i) => i.path)).toEqual(['powerSettings']);
      expect((err as Error).message).toMatch(/\(powerSettings: /);
    }
  });

  test('a page of campaigns, which shows no spec, still lists it', async () => {
    const page = await listCampaignSummaries(db, { limit: 10 });
    expect(page.items.map((s) => s.campaign.id)).toContain(campaignId);
  });
});
