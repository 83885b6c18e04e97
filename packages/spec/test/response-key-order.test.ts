import { BestOf, CampaignResults, CampaignVerdictView, ConfigurationResult, RunCarbon, RunCost, RunEnergyView, Summary } from '@erg/spec';

// The API's serializer writes a response's keys in its schema's order. Moving these schemas into
// @erg/spec (and building them from shared parts) must not reorder what clients have always read.
describe('response schemas keep the key order the API has always answered with', () => {
  // Its figures came out of jsonb before, in jsonb's key order (by length); now in the schema's. The
  // run id and the time of computing still lead.
  test('GET /v1/runs/:id/energy starts with the run id and when it was computed, then the figures', () => {
    expect(Object.keys(RunEnergyView.shape)).toEqual([
      'runId', 'computedAt', 'timeS', 'energyJ', 'edpJs', 'ed2pJs2', 'avgPowerW', 'method', 'coverage', 'components', 'breakdown',
      'nodes', 'gaps', 'warnings', 'flags', 'idle', 'power', 'energyPerUnit', 'window', 'idleWindow', 'slurmEnergy', 'phases', 'dataMovement',
      // Carbon and cost (issue 15 §4) come after every figure that was there before them.
      'carbon', 'cost',
      // Whether a recompute is due (late telemetry) came after them.
      'stale',
      // The experiment's checks (issue 26) after them.
      'validity', 'cooldown',
    ]);
    expect(Object.keys(RunCarbon.shape)).toEqual(['gCO2e', 'energyKWh', 'pue', 'gCO2ePerKWh', 'source', 'series', 'note']);
    expect(Object.keys(RunCost.shape)).toEqual(['total', 'currency', 'nodes', 'nodeHours', 'perNodeHour', 'nodeTimeCost', 'energyKWh', 'pue', 'perKWh', 'energyCost']);
  });

  test('GET /v1/campaigns/:id/verdict', () => {
    expect(Object.keys(CampaignVerdictView.shape)).toEqual([
      'campaignId', 'baselineId', 'policy', 'status', 'counts', 'reasons', 'worst', 'configurations', 'onlyInCandidate', 'onlyInBaseline',
    ]);
  });

  test('GET /v1/campaigns/:id/results', () => {
    // What carbon and cost added comes last, in each object: the keys before are in the order they always were.
    expect(Object.keys(CampaignResults.shape)).toEqual([
      'campaignId', 'configurations', 'paretoFront', 'best', 'tradeoff', 'excluded', 'runsLeftOut', 'groupedBy', 'power', 'phases', 'objectives', 'currency',
      // Data movement per configuration (issue 15 §3) after them.
      'dataMovement',
      // The experiment around the figures (issue 26): design, claims with their uncertainty, validity, node effects.
      'design', 'claims', 'validity', 'nodes',
      // A search campaign's untried candidates, counted (issue 27), last.
      'unmeasured',
    ]);
    expect(Object.keys(BestOf.shape)).toEqual(['time', 'energy', 'edp', 'carbon', 'cost']);
    expect(Object.keys(ConfigurationResult.shape)).toEqual([
      'key', 'parameters', 'n', 'timeS', 'energyJ', 'edpJs', 'ed2pJs2', 'avgPowerW', 'metrics', 'components', 'point', 'paretoOptimal', 'flaggedRuns',
      'fingerprints', 'fingerprintDifferences', 'fingerprint', 'id', 'carbon', 'cost',
    ]);
    expect(Object.keys(Summary.shape)).toEqual(['n', 'mean', 'std', 'ci95', 'cv', 'min', 'max']);
  });
});
