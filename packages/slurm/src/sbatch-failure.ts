/**
 * What a failed sbatch says about its job. sbatch's stderr carries Slurm's error strings
 * (src/common/slurm_errno.c, the same from 22.05 to 25.05); the question erg must answer from them
 * is whether the controller may have created the job anyway:
 *
 *  - `unsent`: the request never reached slurmctld, or slurmctld answered that it will not take
 *    jobs right now. No job exists; submitting again later is safe.
 *  - `in-doubt`: the request may sit in slurmctld's socket or be half processed. A hung
 *    controller (stopped, swapping, stuck on its state save) carries such a request out when it
 *    wakes, after sbatch gave up with "Socket timed out". Only Slurm can say, by job name.
 *  - `limited`: a site limit on queued jobs or array size (SITE_LIMIT): no job exists; submitting
 *    again, with fewer at a time or once earlier jobs ended, is safe.
 *  - `refused`: slurmctld answered with a reason about the job (bad partition or account, …).
 *
 * In-doubt patterns win over unsent ones: sbatch prints "temporarily unable … retrying" on each
 * retry, and a later attempt may still time out.
 */
export type SbatchFailure = 'unsent' | 'in-doubt' | 'limited' | 'refused';

/**
 * Site limits on how much a user may have queued: no job was created, and one will be taken once
 * earlier jobs end (QOS / association MaxSubmitJobs, the controller's MaxJobCount), or once erg
 * asks with fewer at a time (an array larger than the site allows). The reason words come first in
 * sbatch's stderr (`sbatch: error: QOSMaxSubmitJobPerUserLimit`), Slurm's sentence after them.
 */
export const SITE_LIMIT = [
  'QOSMaxSubmitJobPerUserLimit',
  'QOSMaxSubmitJobPerAccountLimit',
  'QOSMaxSubmitJobLimit',
  'AssocMaxSubmitJobLimit',
  'AssocGrpSubmitJobsLimit',
  'QOSGrpSubmitJobsLimit',
  'Slurm job queue full', // MaxJobCount reached: sbatch retries, then gives up with the next line
  'Unable to create job record', // "…, try again": MaxJobCount reached
  'Invalid job array specification', // more tasks than the site's MaxArraySize (or a QOS's)
];

/** The request may have reached slurmctld: a send or receive failed after connecting. */
const IN_DOUBT = [
  'Socket timed out', // SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT: sent, no answer within MessageTimeout
  'Zero Bytes were transmitted or received', // the connection closed around the request
  'Unable to contact slurm controller (send failure)',
  'Unable to contact slurm controller (receive failure)',
  'Unable to contact slurm controller (shutdown failure)',
  'Message send failure',
  'Message receive failure',
  'Communication connection failure',
  'Unexpected missing socket error',
];

/** Nothing reached slurmctld, or it said "not now". */
const UNSENT = [
  'Unable to contact slurm controller (connect failure)',
  'Connection refused',
  'Rate limit exceeded', // SLURMCTLD_COMMUNICATIONS_BACKOFF: rpc rate limiting refused the request
  'Slurm temporarily unable to accept job',
  'Resource temporarily unavailable',
  'try again',
];

/**
 * Failures after which the rest of a submit loop is not sent: the controller is not answering,
 * so each further sbatch would wait out MessageTimeout and leave one more run in doubt.
 */
export const CONTROLLER_NOT_ANSWERING: readonly string[] = [
  'Socket timed out',
  'Zero Bytes were transmitted or received',
  'Unable to contact slurm controller',
  'Connection refused',
];

/** Classifies sbatch's error text (its stderr) by what it implies for the job. */
export function classifySbatchFailure(text: string): SbatchFailure {
  const lower = text.toLowerCase();
  const has = (pattern: string) => lower.includes(pattern.toLowerCase());
  if (IN_DOUBT.some(has)) return 'in-doubt';
  if (SITE_LIMIT.some(has)) return 'limited';
  if (UNSENT.some(has)) return 'unsent';
  return 'refused';
}
