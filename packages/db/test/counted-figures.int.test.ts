import { createTestDatabase, type TestDatabase } from '@erg/testkit';
import {
  countedFiguresOf, createCampaign, createDatabase, createProject, listCampaignRunDataMovement, listCampaignRunPhases, listConfigurationEnergies, resultMemberOf,
  storeRunEnergy, type Database,
} from '@erg/db';
import { forceRunEnd, testCampaignSpec } from '@erg/db/testing';

// The figures that count have one owner, counted-figures.ts: listConfigurationEnergies reads them
// in SQL, erg verify computes them in JavaScript from a bundle's recomputed figures. Results of
// every shape go in; what each read gives back must be what the JavaScript twin gives, to the key
// order (which the results' iterations follow) and the last digit.

/** Stored results of every shape the projection meets, and some it should never meet. */
const RESULTS: (Record<string, unknown> | null)[] = [
  // Full figures: carbon, cost, validity with two failed gates among others, phases and data movement.
  {
    timeS: 12.5, energyJ: 0.1 + 0.2, edpJs: 123456789.12345678, ed2pJs2: 1e-7, avgPowerW: 250.00000000000003, coverage: 1, method: 'integrated',
    components: { module: 6400.2085642727025, gpu: 5000.5, 'cpu.package': 12, ü: 1, ab: 2 }, flags: ['shared_node', 'invalid'],
    carbon: { gCO2e: 1.5, source: 'constant' }, cost: { total: 0.02, currency: 'EUR', perKWh: 0.3, energyCost: 0.01 },
    validity: {
      valid: false, excluded: true, reasons: ['sample share 50% < 90%', 'gap'],
      checks: [{ check: 'sample_share', status: 'fail', value: 0.5 }, { check: 'interval', status: 'pass' }, { check: 'longest_gap', status: 'fail' }, { check: 'clock_offset', status: 'not_measured' }],
    },
    phases: { phases: [{ name: 'forward', energyJ: 3 }], steps: null }, dataMovement: { links: { nvlink: 1 } },
  },
  // Figures stored before carbon, cost and validity existed: none of them there.
  { timeS: 3, energyJ: 0, edpJs: 0, ed2pJs2: 0, avgPowerW: 0, coverage: 0 },
  // Nulls where they may be: no carbon, part of a cost, validity null (present, so an object of nulls).
  { timeS: 3, energyJ: 9, edpJs: 27, ed2pJs2: 81, avgPowerW: 3, coverage: 0.5, components: {}, flags: [], carbon: null, cost: { total: 1, currency: 'USD' }, validity: null, phases: null, dataMovement: [] },
  // Shapes erg never stores: a step that is not an object, checks that are not an array.
  { timeS: 'x', carbon: 3, cost: [1, 2], validity: { valid: true, checks: { check: 'sample_share', status: 'fail' } }, phases: 'no' },
  // Checks that are not all objects, one without its name, and no checks at all.
  { validity: { checks: ['fail', { status: 'fail' }, [{ check: 'x', status: 'fail' }], { check: 'idle_cv', status: 'fail' }] } },
  { validity: { valid: true, excluded: false, reasons: [] } },
  // A completed run without figures.
  null,
];

describe('the figures that count: SQL and JavaScript, one projection', () => {
  let tdb: TestDatabase;
  let db: Database;
  let campaignId: string;
  let runIds: string[];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDatabase(tdb.url);
    const projectId = (await createProject(db, { name: 'counted' })).id;
    const created = await createCampaign(db, {
      name: 't', execution: 'import', clusterId: null, projectId, spec: testCampaignSpec(), specText: null, repetitions: RESULTS.length, configurations: [{ key: 'a=1', parameters: { a: 1 } }],
    });
    campaignId = created.id;
    runIds = created.runs.map((r) => r.id);
    for (const [i, result] of RESULTS.entries()) {
      await forceRunEnd(db, runIds[i]!, 'completed');
      if (result) await storeRunEnergy(db, runIds[i]!, { timeS: 1, energyJ: 1, method: 'integrated', coverage: 1, result }, 1);
    }
  });
  afterAll(async () => {
    await db.close();
    await tdb.drop();
  });

  test("listConfigurationEnergies's result of each run is countedFiguresOf its stored result, exactly, keys in the same order", async () => {
    const rows = await listConfigurationEnergies(db, campaignId);
    expect(rows.map((r) => r.runId)).toEqual(runIds);
    for (const [i, row] of rows.entries()) expect(JSON.stringify(row.result)).toBe(JSON.stringify(countedFiguresOf(RESULTS[i]!)));
    // What the shapes give, so that the test fails where both sides broke alike.
    expect(rows[0]!.result).toMatchObject({ energyJ: 0.1 + 0.2, carbonG: 1.5, costCurrency: 'EUR', validity: { valid: false, excluded: true, failed: ['sample_share', 'longest_gap'] } });
    expect(Object.keys(rows[0]!.result!.components as object)).toEqual(['ab', 'ü', 'gpu', 'module', 'cpu.package']);
    expect(rows[1]!.result).toMatchObject({ carbonG: null, costTotal: null, validity: null });
    expect(rows[2]!.result).toMatchObject({ costTotal: 1, costPerKWh: null, validity: { valid: null, excluded: null, reasons: null, failed: [] } });
    expect(rows[3]!.result).toMatchObject({ timeS: 'x', carbonG: null, costTotal: null, validity: { valid: true, failed: [] } });
    expect(rows[4]!.result).toMatchObject({ validity: { failed: [null, 'idle_cv'] } });
    expect(rows[6]!.result).toBeNull();
  });

  test('the phase and data-movement rows are the runs whose member resultMemberOf gives, in order, exactly', async () => {
    const expected = (member: 'phases' | 'dataMovement') =>
      RESULTS.flatMap((r, i) => {
        const value = resultMemberOf(r, member);
        return value === undefined ? [] : [{ runId: runIds[i], key: 'a=1', value: JSON.stringify(value) }];
      });
    const phases = await listCampaignRunPhases(db, campaignId);
    expect(phases.map((r) => ({ runId: r.runId, key: r.key, value: JSON.stringify(r.phases) }))).toEqual(expected('phases'));
    const movement = await listCampaignRunDataMovement(db, campaignId);
    expect(movement.map((r) => ({ runId: r.runId, key: r.key, value: JSON.stringify(r.dataMovement) }))).toEqual(expected('dataMovement'));
    expect([phases.length, movement.length]).toEqual([1, 1]);
  });
});
