import { SEARCH_STEP_BUDGET_MS, SearchStepFailed, type SearchStepRunner } from '@erg/strategy';
import { RegexBudget, RegexBudgetExceededError, RegexTaskError, type UserRegexRunner } from './regex-runner';

/**
 * A search campaign's step (@erg/strategy's searchStep) run in the scheduler's worker threads
 * rather than on its event loop: fitting the surrogate takes 0.2-0.6 s (100,000 candidates, 300
 * results), during which every other cluster's cycle would wait. A step past its budget, or one
 * that fails in its worker, fails the same way on the same results: SearchStepFailed, which stops
 * the search with the reason (search-campaign.ts).
 */
export function offloadedSearchStep(workers: UserRegexRunner, budgetMs = SEARCH_STEP_BUDGET_MS): SearchStepRunner {
  return async (settings, candidates, observations, options) => {
    try {
      return await workers.run('search-step', { settings, candidates, observations, options }, new RegexBudget(budgetMs));
    } catch (err) {
      if (err instanceof RegexBudgetExceededError) throw new SearchStepFailed(`it ran past its time budget of ${budgetMs} ms`);
      if (err instanceof RegexTaskError) throw new SearchStepFailed(err.message);
      throw err;
    }
  };
}
