import { findRunDetail, findRunEnergyContext, getCampaignSummary, listCampaignRuns, listRunEvents, listRunNodes, readResultsStamp, type Database } from '@erg/db';
import { bundleStream, type EvidenceSource } from '@erg/evidence';
import { readCampaignFigureInputs, readRunFigureInputs, runEnergyView, unmeasuredListPath, type CampaignFigureInputs, type CampaignFigureOptions } from '@erg/results';
import { DEFAULT_OBJECTIVES, RunEnergyView } from '@erg/spec';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { resultsBodyOf } from '../results-answer';
import type { ResultsReader } from '../results-reader';
import { campaignView, runView } from '../views';
import { campaignRef } from './campaigns';

/**
 * A campaign's evidence bundle (GET /v1/campaigns/:id/export): @erg/evidence writes it, from what
 * is read here, a run at a time. Every file is what its route answers — campaign.json as
 * GET /v1/campaigns/:id without its spec, results.json as GET /v1/campaigns/:id/results (its very bytes), each
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

/** How a bundle reads its results: as GET /v1/campaigns/{id}/results without a query does (so both share one kept answer). */
const ROUTE_DEFAULTS: CampaignFigureOptions = { groupBy: 'configuration', objectives: [...DEFAULT_OBJECTIVES], validOnly: false };
/** Reads of the results and their inputs before a bundle of a campaign that keeps changing computes its results from its own inputs. */
const CONSISTENT_READS = 3;

export interface ExportOptions {
  /** Who asks (the route's expensive-read holder): the bundle's results computation takes a place of its own under this name. */
  holder: string;
  tmpDir?: string;
}

/**
 * The campaign's bundle as a stream of tar bytes. Its results are read before the first byte, so
 * that a refusal is an answer of its own: 404 when there is no such campaign, and the results
 * reader's 429, 503 or 422.
 */
export async function exportCampaign(db: Database, results: ResultsReader, id: string, options: ExportOptions): Promise<Readable> {
  const campaign = await campaignRef(db, id);
  const figures = await consistentResults(db, results, campaign.id, `${options.holder} (evidence bundle)`);
  return bundleStream(evidenceSource(db, campaign.id, figures), options.tmpDir === undefined ? {} : { tmpDir: options.tmpDir });
}

/**
 * The campaign's figure inputs (campaign-inputs.json) and its results (results.json) computed
 * from exactly those: the results as the results route answers them — the same bytes, computed in
 * a results worker or kept from an earlier read (ResultsReader), never on the event loop — and the
 * inputs read between two reads of the results stamp that agree, so both are of one state of the
 * campaign (a stamp only grows: equal stamps, nothing changed in between). A campaign that changed
 * under CONSISTENT_READS tries in a row has its results computed from the inputs just read, here,
 * as every bundle's were before.
 */
async function consistentResults(db: Database, results: ResultsReader, campaignId: string, holder: string): Promise<{ inputs: CampaignFigureInputs; results: Uint8Array }> {
  for (let attempt = 1; ; attempt++) {
    const before = await readResultsStamp(db, campaignId);
    const inputs = await readCampaignFigureInputs(db, campaignId);
    const { body } = await results.read(campaignId, ROUTE_DEFAULTS, holder);
    if ((await readResultsStamp(db, campaignId)) === before) return { inputs, results: body };
    if (attempt >= CONSISTENT_READS) return { inputs, results: resultsBodyOf(campaignId, inputs, ROUTE_DEFAULTS, unmeasuredListPath(campaignId)) };
  }
}

function evidenceSource(db: Database, campaignId: string, figures: { inputs: CampaignFigureInputs; results: Uint8Array }): EvidenceSource {
  return {
    campaignId,
    ergVersion: ergVersion(),
    async campaign() {
      const summary = await getCampaignSummary(db, campaignId);
      if (!summary) throw new Error(`campaign ${campaignId} is gone`);
      return { view: campaignView(summary), specStored: summary.campaign.spec, specSubmitted: summary.campaign.specText };
    },
    campaignResults: async () => figures,
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
