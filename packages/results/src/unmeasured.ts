import type { Exclusion, StrategyKind, UnmeasuredConfigurations } from '@erg/spec';

/** Where a search campaign's unmeasured candidates are paged through: countUnmeasured's `list` in the API's answer and in an evidence bundle's results.json. */
export function unmeasuredListPath(campaignId: string): string {
  return `/v1/campaigns/${campaignId}/configurations?measured=false`;
}

/**
 * A search campaign's results as the API answers them: its candidates without a completed run
 * (entries with n = 0) are counted in `unmeasured`, and left out of `configurations` and of
 * `excluded` (where each would say "no completed runs"). A search stores its whole space — 50,000
 * candidates, of which it measures a few hundred — and listing every untried one made its results
 * 49.6 MB of nothing measured. Every figure is the same: an entry without runs takes part in no
 * statistic, front, pick or claim. Grid and adaptive campaigns are returned as they are: their
 * configurations are a plan, each one run or to be run, and readers show the unmeasured ones.
 * `list`: where a client pages through the left-out candidates.
 */
export function countUnmeasured<R extends { configurations: readonly { id: string; n: number }[]; excluded: readonly Exclusion[] }>(
  results: R, strategy: StrategyKind | undefined, list: string,
): R & { unmeasured?: UnmeasuredConfigurations } {
  if (strategy !== 'search') return results;
  const unmeasured = new Set(results.configurations.filter((c) => c.n === 0).map((c) => c.id));
  return {
    ...results,
    configurations: results.configurations.filter((c) => !unmeasured.has(c.id)),
    excluded: results.excluded.filter((e) => !unmeasured.has(e.key)),
    unmeasured: { configurations: unmeasured.size, list },
  };
}
