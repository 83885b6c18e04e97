// The worker thread behind results-reader.ts: computes campaigns' results (results-answer.ts) off
// the API's event loop, from its own database connections (opened on the first job, up to 4: the
// five reads of one campaign's inputs run side by side). One job at a time; a job that runs too
// long or out of memory is ended by terminating the whole worker, its connections with it.
import { parentPort, workerData } from 'node:worker_threads';
import { createDatabase, type Database } from '@erg/db';
import { CampaignInputsKeeper } from '@erg/results';
import type { OffloadJob, OffloadReply, ResultsBody } from './offload';
import { campaignResultsBody } from './results-answer';

const { databaseUrl } = workerData as { databaseUrl: string };
let db: Database | undefined;
// Each campaign's inputs kept between its reads: a read after a change reads only the runs that changed.
const keeper = new CampaignInputsKeeper();

async function run(job: OffloadJob): Promise<ResultsBody> {
  if (job.kind !== 'results') throw new Error(`the results worker computes campaign results, not ${job.kind}`);
  db ??= createDatabase(databaseUrl, { max: 4 });
  let inputsRead: ResultsBody['inputsRead'] = 'whole';
  const body = await campaignResultsBody(db, job.campaignId, job.options, job.list, async (d, id) => {
    const { inputs, read } = await keeper.read(d, id);
    inputsRead = read;
    return inputs;
  });
  return { body, inputsRead };
}

// Modules are loaded: from now on a job's time is its own.
parentPort?.postMessage({ ready: true } satisfies OffloadReply);

parentPort?.on('message', (message: { id: number; job: OffloadJob }) => {
  run(message.job).then(
    // The answer's bytes go back without a copy.
    (result) => parentPort?.postMessage({ id: message.id, ok: true, result } satisfies OffloadReply, [result.body.buffer as ArrayBuffer]),
    (err: unknown) => {
      const code = (err as { code?: unknown }).code;
      const reply: OffloadReply = { id: message.id, ok: false, error: err instanceof Error ? err.message : String(err), ...(typeof code === 'string' ? { code } : {}) };
      parentPort?.postMessage(reply);
    },
  );
});
