// The worker thread behind the evidence bundle's campaign files (services/evidence.ts): reads a
// campaign's figure inputs and writes them as campaign-inputs.json (exact JSON) off the API's event
// loop — for 100,000 runs, 100,000 rows parsed and written — and, where asked, its results as the
// results route answers them, computed from those very inputs. Its own database connections
// (opened on the first job, up to 4: the reads of one campaign's inputs run side by side). One job
// at a time; a job that runs too long or out of memory is ended by terminating the whole worker.
import { parentPort, workerData } from 'node:worker_threads';
import { createDatabase, type Database } from '@erg/db';
import { stringifyExact } from '@erg/evidence/exact-json';
import { readCampaignFigureInputs } from '@erg/results';
import type { CampaignFiles, OffloadJob, OffloadReply } from './offload';
import { resultsBodyOf } from './results-answer';

const { databaseUrl } = workerData as { databaseUrl: string };
let db: Database | undefined;

async function run(job: OffloadJob): Promise<CampaignFiles> {
  if (job.kind !== 'campaign-files') throw new Error(`the evidence worker reads a campaign's files, not ${job.kind}`);
  db ??= createDatabase(databaseUrl, { max: 4 });
  const inputs = await readCampaignFigureInputs(db, job.campaignId);
  const text = new TextEncoder().encode(stringifyExact(inputs, 1));
  return { inputs: text, results: job.results ? resultsBodyOf(job.campaignId, inputs, job.results.options, job.results.list) : null };
}

// Modules are loaded: from now on a job's time is its own.
parentPort?.postMessage({ ready: true } satisfies OffloadReply);

parentPort?.on('message', (message: { id: number; job: OffloadJob }) => {
  run(message.job).then(
    // The files' bytes go back without a copy.
    (files) => parentPort?.postMessage({ id: message.id, ok: true, result: files } satisfies OffloadReply, [files.inputs, files.results].flatMap((b) => (b ? [b.buffer as ArrayBuffer] : []))),
    (err: unknown) => {
      const code = (err as { code?: unknown }).code;
      const reply: OffloadReply = { id: message.id, ok: false, error: err instanceof Error ? err.message : String(err), ...(typeof code === 'string' ? { code } : {}) };
      parentPort?.postMessage(reply);
    },
  );
});
