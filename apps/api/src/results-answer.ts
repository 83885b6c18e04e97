import { z } from 'zod';
import type { Database } from '@erg/db';
import { campaignFiguresOf, countUnmeasured, readCampaignFigureInputs, type CampaignFigureInputs, type CampaignFigureOptions } from '@erg/results';
import { CampaignResults, ConfigurationResult } from '@erg/spec';

/**
 * A campaign's results as GET /v1/campaigns/{id}/results answers them, as UTF-8 JSON: its inputs
 * read (`readInputs`: five queries, or the results worker's CampaignInputsKeeper, which reads only
 * the runs that changed since its last read), the figures computed (campaignFiguresOf: the same
 * view the evidence bundle and `erg verify` use), a search's unmeasured candidates counted rather
 * than listed (countUnmeasured; `list`: where to page through them), checked against the
 * CampaignResults schema and serialised. All of it runs in a results worker (results-worker.ts):
 * for 100,000 runs read whole it is seconds of work that held the event loop. Inline only where no
 * worker is available.
 */
export async function campaignResultsBody(
  db: Database, campaignId: string, options: CampaignFigureOptions, list: string,
  readInputs: (db: Database, campaignId: string) => Promise<CampaignFigureInputs> = readCampaignFigureInputs,
): Promise<Uint8Array> {
  return resultsBodyOf(campaignId, await readInputs(db, campaignId), options, list);
}

/** The answer computed from inputs already read (an evidence bundle's, when its campaign keeps changing under it). */
export function resultsBodyOf(campaignId: string, inputs: CampaignFigureInputs, options: CampaignFigureOptions, list: string): Uint8Array {
  const answer = countUnmeasured({ campaignId, ...campaignFiguresOf(inputs, options) }, inputs.context?.spec.strategy.kind, list);
  // TextEncoder's array owns its whole buffer, which is what a transfer hands over.
  return new TextEncoder().encode(resultsJson(answer as CampaignResults));
}

/** CampaignResults without its configurations, which resultsJson checks and writes one at a time. */
const ResultsWithoutConfigurations = CampaignResults.omit({ configurations: true });

/**
 * The answer checked against its schema and written as JSON: the configurations first, each
 * checked and written once for as long as it is the same object with the same paretoOptimal
 * (campaignResults gives an unchanged configuration's summary again, the same object: a read after
 * one run changed writes one configuration of 10,000 — checking and writing 16 MB took 0.3 s),
 * then the rest. The same JSON value as z.encode(CampaignResults, …) written whole; the members in
 * another order.
 */
export function resultsJson(answer: CampaignResults): string {
  const { configurations, ...rest } = answer;
  const parts: string[] = [];
  for (const c of configurations) {
    const before = written.get(c);
    if (before && before.paretoOptimal === c.paretoOptimal) {
      parts.push(before.json);
      continue;
    }
    const json = JSON.stringify(z.encode(ConfigurationResult, c));
    written.set(c, { paretoOptimal: c.paretoOptimal, json });
    parts.push(json);
  }
  const others = JSON.stringify(z.encode(ResultsWithoutConfigurations, rest));
  return `{"configurations":[${parts.join(',')}]${others === '{}' ? '' : `,${others.slice(1, -1)}`}}`;
}

/** Configurations checked and written before, by their summary object. */
const written = new WeakMap<object, { paretoOptimal: boolean; json: string }>();
