import { findRunDetail, findRunEnergyContext, getCampaignSummary, listCampaignRuns, listRunEvents, listRunNodes, type Database } from '@erg/db';
import { bundleStream, type EvidenceSource } from '@erg/evidence';
import { campaignFiguresOf, readCampaignFigureInputs, readRunFigureInputs, runEnergyView } from '@erg/results';
import { CampaignResults, RunEnergyView } from '@erg/spec';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { campaignView, runView } from '../views';
import { campaignRef } from './campaigns';

/**
 * A campaign's evidence bundle (GET /v1/campaigns/:id/export): @erg/evidence writes it, from what
 * is read here, a run at a time. Every file is what its route answers — campaign.json as
 * GET /v1/campaigns/:id without its spec, results.json as GET /v1/campaigns/:id/results, each
 * run.json as GET /v1/runs/:id with its position and events, each energy.json as
 * GET /v1/runs/:id/energy — and the figures' inputs are what refreshRunEnergy and
 * campaignResultsView compute from, with every sample, and with what each run's figures were
 * computed from beyond its rows as it was stored beside them (run_energy.context).
 */

/** erg's version, the API's own (package.json; one version for every part of erg). */
export function ergVersion(): string {
  // A require, not a file read: the bundled and the built API find it the same way.
  return (require('../../package.json') as { version: string }).version;
}

/** The campaign's bundle as a stream of tar bytes; 404 when there is no such campaign. */
export async function exportCampaign(db: Database, id: string, options: { tmpDir?: string } = {}): Promise<Readable> {
  const campaign = await campaignRef(db, id);
  return bundleStream(evidenceSource(db, campaign.id), options);
}

function evidenceSource(db: Database, campaignId: string): EvidenceSource {
  return {
    campaignId,
    ergVersion: ergVersion(),
    async campaign() {
      const summary = await getCampaignSummary(db, campaignId);
      if (!summary) throw new Error(`campaign ${campaignId} is gone`);
      return { view: campaignView(summary), specStored: summary.campaign.spec, specSubmitted: summary.campaign.specText };
    },
    campaignInputs: () => readCampaignFigureInputs(db, campaignId),
    results: (inputs) => z.encode(CampaignResults, { campaignId, ...campaignFiguresOf(inputs) } as CampaignResults),
    runIds: async () => (await listCampaignRuns(db, campaignId)).items.map((r) => r.id),
    async run(runId) {
      const [run, nodes, events] = await Promise.all([findRunDetail(db, runId), listRunNodes(db, runId), listRunEvents(db, runId)]);
      if (!run) throw new Error(`run ${runId} is gone`);
      return {
        // A bundle leaves the project: its readers get no cluster failure's detail (seesClusterFailures).
        ...runView(run, run.cluster, nodes, false),
        position: run.position,
        events: events.map((e) => ({ at: e.at.toISOString(), from: e.from, to: e.to, detail: e.detail })),
      };
    },
    async runInputs(runId) {
      // What its stored figures were computed from beyond its rows (the jobs that shared its nodes,
      // its cluster's settings and carbon intensity, as they were then), not what the cluster holds
      // now; read as it is now for a run without figures, or with figures from before erg kept it.
      const context = (await findRunEnergyContext(db, runId)) ?? undefined;
      const inputs = await readRunFigureInputs(db, runId, { allSamples: true, context });
      return typeof inputs === 'string' ? null : inputs;
    },
    async runEnergy(runId) {
      const view = await runEnergyView(db, runId);
      return view === null ? null : z.encode(RunEnergyView, view);
    },
  };
}
