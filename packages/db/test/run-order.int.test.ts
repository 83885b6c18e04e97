// The run order on Postgres (issue 26): createCampaign places runs in the design's order and stores
// the seed (drawn when the spec gave none) in the spec and the design columns; the runs a strategy
// step or a sequential suite's look adds follow the campaign's order too. The orders themselves are
// @erg/sweep's (run-order.test.ts); here: that the rows say them.
import { randomBytes } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import {
  addAdaptiveRuns, addSuiteRunRepetitions, createCampaign, createDatabase, createProject, createSuite, findCampaignSpec, getCampaignSummary, insertSuiteRun,
  listCampaignRuns, listCampaignSummaries, listConfigurationAttempts, suiteRunConfigurations, withAdaptiveCampaign, type Database,
} from '@erg/db';
import { testCampaignSpec } from '@erg/db/testing';
import { SecretBox } from '@erg/secrets';
import { MAX_DESIGN_SEED, RegressionPolicy } from '@erg/spec';
import { blockOrder, campaignRunOrder } from '@erg/sweep';

describe('the run order in the database', () => {
  let tdb: TestDatabase;
  let db: Database;
  let projectId: string;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    projectId = (await createProject(db, { name: 'run-order' })).id;
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  const configurations = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `c=${i}`, parameters: { c: i } }));
  const store = (design: Record<string, unknown>, n: number, repetitions: number, extra: { strategyOpen?: boolean } = {}, drawSeed?: () => number) =>
    createCampaign(
      db,
      { name: 't', execution: 'slurm', clusterId: null, projectId, spec: testCampaignSpec({ design }), specText: null, repetitions, configurations: configurations(n), ...extra },
      ...(drawSeed ? [drawSeed] : []),
    );
  /** The runs by position, as `<configuration>.<repetition>`. */
  const stored = async (campaignId: string) => (await listCampaignRuns(db, campaignId, { limit: 1000 })).items.map((r) => `${r.configurationKey.slice(2)}.${r.repetition}`);
  const expected = (runs: Iterable<{ configuration: number; repetition: number }>) => [...runs].map((r) => `${r.configuration}.${r.repetition}`);

  test('randomized-blocks with a given seed: positions follow the seed, block after block; the seed is kept', async () => {
    const created = await store({ seed: 1234 }, 5, 3);
    expect(created.design).toEqual({ order: 'randomized-blocks', seed: 1234 });
    const runs = await stored(created.id);
    expect(runs).toEqual(expected(campaignRunOrder(5, 3, { order: 'randomized-blocks', seed: 1234 })));
    expect(runs.slice(0, 5).map((r) => Number(r.split('.')[0]))).toEqual(blockOrder([0, 1, 2, 3, 4], 1, { order: 'randomized-blocks', seed: 1234 }));
    expect(runs.map((r) => r.split('.')[1])).toEqual(['1', '1', '1', '1', '1', '2', '2', '2', '2', '2', '3', '3', '3', '3', '3']);
    expect((await findCampaignSpec(db, created.id))?.design.seed).toBe(1234);
  });

  test('without a seed one is drawn, stored in the spec (readStoredSpec returns it) and the columns, and the runs follow it', async () => {
    const created = await store({}, 4, 2);
    const { seed } = created.design;
    expect(Number.isInteger(seed) && seed! >= 0 && seed! <= MAX_DESIGN_SEED).toBe(true);
    expect((await findCampaignSpec(db, created.id))?.design).toMatchObject({ order: 'randomized-blocks', seed });
    expect((await getCampaignSummary(db, created.id))?.campaign.design).toEqual({ order: 'randomized-blocks', seed });
    expect(await stored(created.id)).toEqual(expected(campaignRunOrder(4, 2, { order: 'randomized-blocks', seed })));
  });

  test('the seed is drawn per campaign: the same spec twice gets its own draw each time', async () => {
    const draws = [11, 22];
    const a = await store({}, 6, 1, {}, () => draws.shift()!);
    const b = await store({}, 6, 1, {}, () => draws.shift()!);
    expect([a.design.seed, b.design.seed]).toEqual([11, 22]);
    expect(await stored(a.id)).not.toEqual(await stored(b.id));
  });

  test('blocks and configuration-major: listed order per block, and exactly the old positions; no seed', async () => {
    const blocks = await store({ order: 'blocks', seed: 5 }, 3, 2);
    expect(blocks.design).toEqual({ order: 'blocks', seed: null });
    expect(await stored(blocks.id)).toEqual(['0.1', '1.1', '2.1', '0.2', '1.2', '2.2']);
    const major = await store({ order: 'configuration-major' }, 3, 2);
    expect(await stored(major.id)).toEqual(['0.1', '0.2', '1.1', '1.2', '2.1', '2.2']);
    expect((await findCampaignSpec(db, major.id))?.design.seed).toBeUndefined();
  });

  test('a list of campaigns shows each one\'s order and seed without reading specs', async () => {
    const created = await store({ seed: 77 }, 2, 1);
    const { items } = await listCampaignSummaries(db, { limit: 100 });
    expect(items.find((s) => s.campaign.id === created.id)?.campaign.design).toEqual({ order: 'randomized-blocks', seed: 77 });
  });

  test("an adaptive step's further repetitions interleave: block by block, each in the seed's order, after the first runs", async () => {
    const created = await store({ seed: 4242 }, 6, 1, { strategyOpen: true });
    const added = await withAdaptiveCampaign(db, created.id, async (tx, campaign) => {
      expect(campaign.design).toEqual({ order: 'randomized-blocks', seed: 4242 });
      const attempts = await listConfigurationAttempts(tx, created.id);
      // Configurations 1, 3, 4 and 5 get two more repetitions, listed in another order than their positions.
      const adds = [5, 1, 4, 3].map((i) => attempts.find((a) => a.position === i)!).map((a) => ({ configurationId: a.configurationId, position: a.position, after: a.maxRepetition, runs: 2 }));
      return addAdaptiveRuns(tx, created.id, campaign.design, adds, 'adaptive: test');
    });
    expect(added).toBe(8);
    const runs = await stored(created.id);
    const design = { order: 'randomized-blocks' as const, seed: 4242 };
    expect(runs.slice(6)).toEqual([
      ...blockOrder([1, 3, 4, 5], 2, design).map((c) => `${c}.2`),
      ...blockOrder([1, 3, 4, 5], 3, design).map((c) => `${c}.3`),
    ]);
    // Another seed would have placed them otherwise (the order is the seed's, not the adds').
    expect(blockOrder([1, 3, 4, 5], 2, { order: 'randomized-blocks', seed: 4243 })).not.toEqual(blockOrder([1, 3, 4, 5], 2, design));
  });

  test('adding a repetition that exists already adds nothing, and positions stay unique', async () => {
    const created = await store({ seed: 3 }, 2, 1, { strategyOpen: true });
    const again = await withAdaptiveCampaign(db, created.id, async (tx, campaign) => {
      const attempts = await listConfigurationAttempts(tx, created.id);
      return addAdaptiveRuns(tx, created.id, campaign.design, attempts.map((a) => ({ configurationId: a.configurationId, position: a.position, after: 0, runs: 1 })), 'again');
    });
    expect(again).toBe(0);
    expect(await stored(created.id)).toHaveLength(2);
  });

  test("a sequential suite's look adds one block in the campaign's order", async () => {
    const suite = await createSuite(
      db,
      {
        name: 'order-suite', projectId, description: null, template: {}, templateText: null, cron: null, timezone: 'UTC', baselinePolicy: 'last-passing', baselineCampaignId: null,
        policy: RegressionPolicy.parse({}), webhookUrl: null, webhookSecret: null,
      },
      new SecretBox(randomBytes(32)),
    );
    let suiteRunId = '';
    const created = await createCampaign(db, {
      name: 't', execution: 'slurm', clusterId: null, projectId, spec: testCampaignSpec({ design: { seed: 9001 } }), specText: null, repetitions: 1, configurations: configurations(5),
      within: async (tx, campaignId) => {
        suiteRunId = await insertSuiteRun(tx, campaignId, { suiteId: suite.id, trigger: 'manual', triggerKey: null, baselineCampaignId: null, webhook: false, sequential: null });
      },
    });
    const adds = (await suiteRunConfigurations(db, created.id)).map((a) => ({ configurationId: a.configurationId, position: a.position, after: a.maxRepetition }));
    expect(await addSuiteRunRepetitions(db, suiteRunId, 0, adds, { look: 1 })).toBe(true);
    expect((await stored(created.id)).slice(5)).toEqual(blockOrder([0, 1, 2, 3, 4], 2, { order: 'randomized-blocks', seed: 9001 }).map((c) => `${c}.2`));
  });
});
