// The worker thread behind offload.ts: decodes and validates the request bodies that cost too
// much for the event loop (large campaign specs and suites, large telemetry batches). It holds
// no connections and keeps no state between jobs; a job that runs too long or out of memory is
// ended by terminating the whole worker.
import { parentPort } from 'node:worker_threads';
import { decodeTelemetryBatch } from '@erg/spec';
import { validateCampaign, validateCampaignText } from '@erg/sweep';
import { validateSuite, validateSuiteText } from '@erg/suites/validate';
import type { OffloadJob, OffloadReply } from './offload';

function run(job: OffloadJob): { result: unknown; transfer: ArrayBuffer[] } {
  switch (job.kind) {
    case 'campaign':
      return { result: job.yaml ? validateCampaignText(job.body as string, 'yaml', job.limits) : validateCampaign(job.body, job.limits), transfer: [] };
    case 'suite':
      return { result: job.yaml ? validateSuiteText(job.body as string, 'yaml', job.limits) : validateSuite(job.body, job.limits), transfer: [] };
    case 'telemetry': {
      const decoded = decodeTelemetryBatch(Buffer.from(job.body).toString('utf8'), job.bounds);
      // The columns go back without a copy.
      const transfer = decoded.ok ? decoded.batch.series.flatMap((s) => [s.t.buffer as ArrayBuffer, s.v.buffer as ArrayBuffer]) : [];
      return { result: decoded, transfer };
    }
    case 'results':
      throw new Error('campaign results are computed by results-worker.js, not by the validation workers');
    case 'campaign-files':
      throw new Error("an evidence bundle's campaign files are read by evidence-worker.js, not by the validation workers");
  }
}

// Modules are loaded: from now on a job's time is its own.
parentPort?.postMessage({ ready: true } satisfies OffloadReply);

parentPort?.on('message', (message: { id: number; job: OffloadJob }) => {
  let reply: OffloadReply;
  let transfer: ArrayBuffer[] = [];
  try {
    const done = run(message.job);
    reply = { id: message.id, ok: true, result: done.result };
    transfer = done.transfer;
  } catch (err) {
    reply = { id: message.id, ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  parentPort?.postMessage(reply, transfer);
});
