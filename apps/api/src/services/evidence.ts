import { findRunDetail, findRunEnergyContext, getCampaignSummary, listCampaignRunIds, listRunEvents, listRunNodes, readResultsStamp, type Database } from '@erg/db';
import { bundleStream, stringifyExact, type EvidenceSource } from '@erg/evidence';
import { readCampaignFigureInputs, readRunFigureInputs, runEnergyView, unmeasuredListPath, type CampaignFigureOptions } from '@erg/results';
import { DEFAULT_OBJECTIVES, RunEnergyView } from '@erg/spec';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { errors } from '../errors';
import { OffloadBusy, OffloadTooCostly, type CampaignFiles, type Offload } from '../offload';
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
/** Tries at reading the inputs and taking the results route's answer before a campaign that keeps changing has both made from one read. */
const SEPARATE_TRIES = 2;

export interface ExportDeps {
  db: Database;
  results: ResultsReader;
  /** The evidence worker (evidence-worker.js); not `available`: its work is done here. */
  evidence: Offload;
}

export interface ExportOptions {
  /** Who asks (the route's expensive-read holder): the bundle's results computation takes a place of its own under this name. */
  holder: string;
  tmpDir?: string;
}

/**
 * The campaign's bundle as a stream of tar bytes. Its campaign files are read before the first
 * byte, so that a refusal is an answer of its own: 404 when there is no such campaign, the results
 * reader's 429, 503 or 422, and 503 or 422 from the evidence worker.
 */
export async function exportCampaign(deps: ExportDeps, id: string, options: ExportOptions): Promise<Readable> {
  const campaign = await campaignRef(deps.db, id);
  const files = await campaignFiles(deps, campaign.id, `${options.holder} (evidence bundle)`);
  return bundleStream(evidenceSource(deps.db, campaign.id, files), options.tmpDir === undefined ? {} : { tmpDir: options.tmpDir });
}

/**
 * The campaign's figure inputs (campaign-inputs.json) and its results (results.json) computed
 * from exactly those, none of it on the event loop: the inputs read and written in the evidence
 * worker; the results the results route's own answer — the same bytes, computed in a results
 * worker or kept from an earlier read (ResultsReader) — when the inputs were read between two
 * reads of the results stamp that agree (a stamp only grows: equal stamps, nothing changed in
 * between). A campaign that changed under SEPARATE_TRIES tries in a row has both made from one
 * read in the evidence worker.
 */
async function campaignFiles(deps: ExportDeps, campaignId: string, holder: string): Promise<CampaignFiles & { results: Uint8Array }> {
  const list = unmeasuredListPath(campaignId);
  for (let attempt = 1; attempt <= SEPARATE_TRIES; attempt++) {
    const before = await readResultsStamp(deps.db, campaignId);
    const { inputs } = await readFiles(deps, campaignId, null);
    const { body } = await deps.results.read(campaignId, ROUTE_DEFAULTS, holder);
    if ((await readResultsStamp(deps.db, campaignId)) === before) return { inputs, results: body };
  }
  const files = await readFiles(deps, campaignId, { options: ROUTE_DEFAULTS, list });
  return { inputs: files.inputs, results: files.results! };
}

/** evidence-worker.ts's job, there or (no worker) here; the pool's refusals as the API's errors. */
async function readFiles(deps: ExportDeps, campaignId: string, results: { options: CampaignFigureOptions; list: string } | null): Promise<CampaignFiles> {
  if (!deps.evidence.available) {
    const inputs = await readCampaignFigureInputs(deps.db, campaignId);
    return { inputs: Buffer.from(stringifyExact(inputs, 1)), results: results ? resultsBodyOf(campaignId, inputs, results.options, results.list) : null };
  }
  try {
    return await deps.evidence.run({ kind: 'campaign-files', campaignId, results });
  } catch (err) {
    if (err instanceof OffloadBusy) throw errors.busy();
    if (err instanceof OffloadTooCostly) throw errors.tooCostly("this campaign's evidence bundle", err.why);
    throw err;
  }
}

function evidenceSource(db: Database, campaignId: string, files: { inputs: Uint8Array; results: Uint8Array }): EvidenceSource {
  return {
    campaignId,
    ergVersion: ergVersion(),
    async campaign() {
      const summary = await getCampaignSummary(db, campaignId);
      if (!summary) throw new Error(`campaign ${campaignId} is gone`);
      return { view: campaignView(summary), specStored: summary.campaign.spec, specSubmitted: summary.campaign.specText };
    },
    campaignResults: async () => files,
    runIds: () => listCampaignRunIds(db, campaignId),
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
