// The spool pull accepts a run's samples in the same window as the API's live ingest: a batch the
// agents could not push is not judged by other rules when the scheduler pulls it at job end.
import { decodeTelemetryValue, sampleTimeBounds, type SampleTimeBounds } from '@erg/spec';
import { spoolSampleBounds } from '../src/spool';

const createdAt = new Date(Date.UTC(2026, 10, 30, 12));
// It waited an hour in pending (a busy cluster) before it was claimed; the job then ran an hour.
const endedAt = new Date(createdAt.getTime() + 2 * 3_600_000);
// The scheduler was down for two hours after the job ended, then finalized it.
const now = endedAt.getTime() + 2 * 3_600_000;
const minute = 60_000;

const accepts = (bounds: SampleTimeBounds, t: number) =>
  decodeTelemetryValue({ node: 'n1', seq: 0, samples: [{ sensor: 'gpu0.power', t, v: 100 }] }, bounds).ok;

describe('spoolSampleBounds', () => {
  const live = sampleTimeBounds({ createdAt, endedAt, imported: false }, now);
  const spooled = spoolSampleBounds({ createdAt }, endedAt, now);

  test.each([
    ['two hours before the run was created', createdAt.getTime() - 120 * minute],
    ['five minutes before the run was created', createdAt.getTime() - 5 * minute],
    ['while it waited to be claimed', createdAt.getTime() + 30 * minute],
    ['during the job', createdAt.getTime() + 90 * minute],
    ['five minutes after the job ended', endedAt.getTime() + 5 * minute],
    ['half an hour after the job ended', endedAt.getTime() + 30 * minute],
    ['just before the pull', now - minute],
  ])('a sample stamped %s is accepted from the spool exactly when the API would accept it', (_when, t) => {
    expect(accepts(spooled, t)).toBe(accepts(live, t));
  });

  test('are the shared bounds of a run that ended when its job did', () => {
    expect(spooled).toEqual(live);
  });
});
