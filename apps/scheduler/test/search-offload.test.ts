// A search campaign's step runs in the scheduler's worker threads (search-offload.ts): the same
// proposals as inline; a step past its budget or failing in its worker is SearchStepFailed (the
// search then stops with that reason), anything else propagates.
import { searchStep, SearchStepFailed, type SearchCandidate, type SearchObservation } from '@erg/strategy';
import { UserRegexRunner } from '../src/regex-runner';
import { offloadedSearchStep } from '../src/search-offload';

const candidates: SearchCandidate[] = Array.from({ length: 2000 }, (_, i) => ({ key: `k${i}`, parameters: { a: i % 40, b: Math.floor(i / 40) % 10, c: ['x', 'y', 'z', 'w', 'v'][Math.floor(i / 400)]! } }));
const observations: SearchObservation[] = Array.from({ length: 120 }, (_, i) => {
  const j = (i * 7919) % candidates.length;
  return { key: `k${j}`, runs: [[1 + (j % 40), 50 - (j % 10)]], pending: 0 };
});
const settings = { repetitions: 1, initialConfigurations: 10, seed: 3, budget: { maxRuns: 400 } };
const options = { slots: 6, spentRuns: 120 };

describe('the search step off the event loop', () => {
  let workers: UserRegexRunner;
  beforeEach(() => {
    workers = new UserRegexRunner({ workers: 1 });
  });
  afterEach(() => workers.close());

  test('proposes what searchStep proposes inline', async () => {
    const offloaded = await offloadedSearchStep(workers)(settings, candidates, observations, options);
    expect(offloaded).toEqual(searchStep(settings, candidates, observations, options));
    expect(offloaded.propose).toHaveLength(6);
  });

  test('past its budget, or failing in its worker: SearchStepFailed with the reason', async () => {
    await expect(offloadedSearchStep(workers, 1)(settings, candidates, observations, options)).rejects.toThrow(new SearchStepFailed('it ran past its time budget of 1 ms'));
    const bad = offloadedSearchStep(workers)(settings, candidates, [{ key: 'nope', runs: [[1, 1]], pending: 0 }], options);
    await expect(bad).rejects.toBeInstanceOf(SearchStepFailed);
    await expect(bad).rejects.toThrow(/nope/);
  });

  test('a closed pool is not a failed step: it propagates as it is, for a later step to retry', async () => {
    await workers.close();
    const closed = offloadedSearchStep(workers)(settings, candidates, observations, options);
    await expect(closed).rejects.not.toBeInstanceOf(SearchStepFailed);
  });
});
