// The spool pull accepts a run's samples in the same window as the API's live ingest: a batch the
// agents could not push is not judged by other rules when the scheduler pulls it at job end.
import { decodeTelemetryValue, sampleTimeBounds, type SampleTimeBounds } from '@erg/spec';
import { spoolSampleBounds } from '../src/spool';

const claimedAt = new Date(Date.UTC(2026, 10, 30, 12));
const endedAt = new Date(claimedAt.getTime() + 3_600_000);
// The scheduler was down for two hours after the job ended, then finalized it.
const now = endedAt.getTime() + 2 * 3_600_000;
const minute = 60_000;

const accepts = (bounds: SampleTimeBounds, t: number) =>
  decodeTelemetryValue({ node: 'n1', seq: 0, samples: [{ sensor: 'gpu0.power', t, v: 100 }] }, bounds).ok;

describe('spoolSampleBounds', () => {
  // A run is claimed as soon as its campaign is created here, so creation and claim coincide.
  const live = sampleTimeBounds({ createdAt: claimedAt, endedAt, imported: false }, now);
  const spooled = spoolSampleBounds({ claimedAt }, endedAt, now);

  test.each([
    ['two hours before the claim', claimedAt.getTime() - 120 * minute],
    ['five minutes before the claim', claimedAt.getTime() - 5 * minute],
    ['during the job', claimedAt.getTime() + 30 * minute],
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
