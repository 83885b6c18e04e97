import { CampaignResults, parseCampaignSpec, SearchStrategy, type CampaignSpec } from '@erg/spec';
import { z } from 'zod';
import { runFiguresOf, type RunFigureInputs } from '@erg/results/run-figures';
import { campaignFiguresOf, type CampaignFigureInputs } from '@erg/results/campaign-figures';
import { countUnmeasured, unmeasuredListPath } from '@erg/results/unmeasured';
import { campaignInputsWith, stringifyExact, type EvidenceSource } from '../src';

/**
 * An evidence source held in memory: an import campaign of two configurations × two repetitions
 * on two nodes each, samples with fractional times and values (every digit of a double counts),
 * one run with marks. Its stored figures are runFiguresOf's, as refreshRunEnergy stores them; its
 * campaign inputs are built the way verify rebuilds them (the export's integration test holds
 * that way equal to the database's).
 */
export function syntheticSource(seed = 1, options: { search?: boolean } = {}): EvidenceSource & { inputs: Map<string, RunFigureInputs> } {
  const parsed = parseCampaignSpec({ name: 'synthetic', execution: 'import', repetitions: 2, parameters: { cap: [200, 300] } });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  // `search`: the same runs as a search's, over a space with one more candidate it has not tried.
  const spec: CampaignSpec = options.search ? { ...parsed.spec, strategy: SearchStrategy.parse({ kind: 'search', budget: { maxRuns: 8 } }) } : parsed.spec;
  let state = seed;
  const random = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const campaignId = '7d3c1f0e-2a4b-4c6d-8e9f-0a1b2c3d4e5f';
  const inputs = new Map<string, RunFigureInputs>();
  const runs: { id: string; key: string; cap: number; repetition: number; position: number }[] = [];
  let position = 0;
  for (const cap of [200, 300]) {
    for (const repetition of [1, 2]) {
      const id = `00000000-0000-4000-8000-00000000000${position}`;
      runs.push({ id, key: `cap=${cap}`, cap, repetition, position });
      const startMs = Date.UTC(2026, 10, 30, 10, position) + random();
      const window = { startMs, endMs: startMs + 10_000 + 1000 * random() };
      const series = ['n1', 'n2'].flatMap((node) =>
        ['gpu0.power', 'module0.power'].map((sensor) => {
          const t = Float64Array.from({ length: 130 }, (_, i) => startMs - 1500 + i * 100 + random() * 10);
          const v = Float64Array.from(t, () => cap * (0.5 + random()) + (sensor === 'gpu0.power' ? 0 : 50));
          return { node, sensor, t, v };
        }),
      );
      const marks =
        position === 0
          ? [
              { node: 'n1', offset: 0, kind: 'begin' as const, name: 'forward', t: startMs + 1000.25, clock: 'mono' as const, writer: 'py' },
              { node: 'n1', offset: 40, kind: 'end' as const, name: 'forward', t: startMs + 6000.5, clock: 'mono' as const, writer: 'py' },
            ]
          : [];
      inputs.set(id, {
        window, idleWindow: null, execution: 'import', spec, configuration: { key: `cap=${cap}`, parameters: { cap } }, metrics: {}, nodeList: null, slurmEnergyJ: null,
        series, sensors: [], marks, neighbours: [], powerRecords: [], cluster: null, carbonIntensity: [], clocks: [],
      });
      position++;
    }
  }
  const figures = new Map([...inputs].map(([id, i]) => [id, JSON.parse(JSON.stringify(runFiguresOf(i)))]));
  const untried = options.search ? [{ key: 'cap=400', parameters: { cap: 400 }, position: 2, runId: null, repetition: null, metrics: null, result: null, nodeList: null }] : [];
  const bare: CampaignFigureInputs = {
    rows: [...runs.map((r) => ({ key: r.key, parameters: { cap: r.cap }, position: r.cap === 200 ? 0 : 1, runId: r.id, repetition: r.repetition, metrics: {}, result: null, nodeList: null })), ...untried],
    runNodes: new Map(runs.map((r) => [r.id, [{ node: 'n1', fingerprintId: null, fingerprintClassId: null, fingerprint: null, power: null, clockOffsetMs: null, clockReadings: 0 }]])),
    context: { spec, design: { order: 'randomized-blocks', seed: 42 }, cluster: null },
    phaseRows: [],
    movementRows: [],
  };
  const campaignInputs = campaignInputsWith(bare, figures);
  return {
    campaignId,
    ergVersion: '0.1.0-test',
    inputs,
    campaign: async () => ({ view: { id: campaignId, name: 'synthetic', execution: 'import' }, specStored: spec, specSubmitted: 'name: synthetic\nexecution: import\n' }),
    // As the results route answers: a search's untried candidates counted, encoded by its schema, as JSON.
    campaignResults: async () => {
      const results = countUnmeasured({ campaignId, ...campaignFiguresOf(campaignInputs) }, spec.strategy.kind, unmeasuredListPath(campaignId));
      return { inputs: stringifyExact(campaignInputs, 1), results: JSON.stringify(z.encode(CampaignResults, results as CampaignResults)) };
    },
    runIds: async () => runs.map((r) => r.id),
    run: async (id) => ({ id, state: 'completed', position: runs.find((r) => r.id === id)!.position, events: [] }),
    runInputs: async (id) => inputs.get(id) ?? null,
    runEnergy: async (id) => ({ runId: id, computedAt: '2026-11-30T12:00:00.000Z', stale: false, ...figures.get(id), cooldown: null }),
  };
}
