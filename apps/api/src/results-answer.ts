import { z } from 'zod';
import type { Database } from '@erg/db';
import { campaignFiguresOf, countUnmeasured, readCampaignFigureInputs, type CampaignFigureInputs, type CampaignFigureOptions } from '@erg/results';
import { CampaignResults } from '@erg/spec';

/**
 * A campaign's results as GET /v1/campaigns/{id}/results answers them, as UTF-8 JSON: its inputs
 * read (five queries), the figures computed (campaignFiguresOf: the same view the evidence bundle
 * and `erg verify` use), a search's unmeasured candidates counted rather than listed
 * (countUnmeasured; `list`: where to page through them), checked against the CampaignResults
 * schema and serialised. All of it runs in a results worker (results-worker.ts): for 100,000 runs
 * it is about a second of work that held the event loop. Inline only where no worker is available.
 */
export async function campaignResultsBody(db: Database, campaignId: string, options: CampaignFigureOptions, list: string): Promise<Uint8Array> {
  return resultsBodyOf(campaignId, await readCampaignFigureInputs(db, campaignId), options, list);
}

/** The answer computed from inputs already read (an evidence bundle's, when its campaign keeps changing under it). */
export function resultsBodyOf(campaignId: string, inputs: CampaignFigureInputs, options: CampaignFigureOptions, list: string): Uint8Array {
  const answer = countUnmeasured({ campaignId, ...campaignFiguresOf(inputs, options) }, inputs.context?.spec.strategy.kind, list);
  // TextEncoder's array owns its whole buffer, which is what a transfer hands over.
  return new TextEncoder().encode(JSON.stringify(z.encode(CampaignResults, answer as CampaignResults)));
}
