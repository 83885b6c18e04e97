// The tick folds campaigns' results change rows (ResultsChangesPruning): at most once a minute,
// a bounded pass each time, and again at the next tick while a pass finds as many as it may fold.
import { RESULTS_CHANGES_FOLD_ABOVE, type Database } from '@erg/db';
import { RESULTS_CHANGES_PRUNE, ResultsChangesPruning } from '../src/results-changes';

describe('folding results change rows from the tick', () => {
  const db = {} as Database;
  const log = { info: jest.fn() };

  test('once per interval, each pass bounded; a full pass is followed by another at the next tick', async () => {
    const folded: string[][] = [['a', 'b'], ['c'], []];
    const fold = jest.fn(async () => folded.shift() ?? []);
    const pruning = new ResultsChangesPruning(db, log, { everyMs: 60_000, above: 64, campaigns: 2 }, fold);
    await pruning.maybeRun(0);
    expect(fold).toHaveBeenLastCalledWith(db, { above: 64, campaigns: 2 });
    // As many as a pass may fold: the next tick goes on.
    await pruning.maybeRun(2_000);
    expect(fold).toHaveBeenCalledTimes(2);
    // Fewer: the next pass waits for the interval.
    await pruning.maybeRun(4_000);
    expect(fold).toHaveBeenCalledTimes(2);
    await pruning.maybeRun(62_000);
    expect(fold).toHaveBeenCalledTimes(3);
  });

  test('the defaults leave the read\'s own fold to campaigns being read, and bound a pass', () => {
    expect(RESULTS_CHANGES_PRUNE.above).toBeLessThan(RESULTS_CHANGES_FOLD_ABOVE);
    expect(RESULTS_CHANGES_PRUNE.campaigns).toBeLessThanOrEqual(1000);
  });
});
