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
  return resultsBytes(answer as CampaignResults);
}

/** CampaignResults without its configurations, which resultsBytes checks and writes one at a time. */
const ResultsWithoutConfigurations = CampaignResults.omit({ configurations: true });

/**
 * The answer checked against its schema and written as UTF-8 JSON: the configurations first, each
 * checked, written and encoded once for as long as it is the same object with the same
 * paretoOptimal (campaignResults gives an unchanged configuration's summary again, the same object:
 * a read after one run changed writes one configuration of 10,000 — checking, writing and encoding
 * 16 MB took 0.3 s), then the rest. The same JSON value as z.encode(CampaignResults, …) written
 * whole; the members in another order. The array owns its whole buffer (a transfer hands it over).
 */
export function resultsBytes(answer: CampaignResults): Uint8Array {
  const { configurations, ...rest } = answer;
  const parts: Uint8Array[] = [utf8.encode('{"configurations":[')];
  configurations.forEach((c, i) => {
    let before = written.get(c);
    if (!before || before.paretoOptimal !== c.paretoOptimal) {
      before = { paretoOptimal: c.paretoOptimal, json: utf8.encode(JSON.stringify(z.encode(ConfigurationResult, c))) };
      written.set(c, before);
    }
    if (i > 0) parts.push(COMMA);
    parts.push(before.json);
  });
  const others = JSON.stringify(z.encode(ResultsWithoutConfigurations, rest));
  parts.push(utf8.encode(`]${others === '{}' ? '' : `,${others.slice(1, -1)}`}}`));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

const utf8 = new TextEncoder();
const COMMA = utf8.encode(',');

/** Configurations checked and written before, by their summary object: their JSON, encoded. */
const written = new WeakMap<object, { paretoOptimal: boolean; json: Uint8Array }>();
