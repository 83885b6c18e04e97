// A campaign's strategy (issue 16 §4): grid by default; adaptive written short or in full, its
// defaults filled in; every conflict a 400-style issue at its path with what to do.
import { validateCampaign } from '../src';

const base = { name: 'n', cluster: 'local', run: 'srun ./bench', parameters: { a: [1, 2, 3], b: ['x', 'y'] } };
const LIMITS = { maxRuns: 1000 };
const issuesOf = (spec: unknown, limits = LIMITS) => {
  const r = validateCampaign(spec, limits);
  return r.ok ? [] : r.issues;
};

describe('strategy', () => {
  test('absent: the grid', () => {
    const r = validateCampaign(base, LIMITS);
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    expect(r.spec.strategy).toEqual({ kind: 'grid' });
  });

  test('`strategy: adaptive` and the full form, with their defaults', () => {
    const short = validateCampaign({ ...base, strategy: 'adaptive' }, LIMITS);
    if (!short.ok) throw new Error(JSON.stringify(short.issues));
    expect(short.spec.strategy).toEqual({ kind: 'adaptive', minRepetitions: 2, maxRepetitions: 10, targetRelativeHalfWidth: 0.05, confidence: 0.95, objectives: ['time', 'energy'], screening: false });
    const full = validateCampaign({ ...base, strategy: { kind: 'adaptive', minRepetitions: 3, maxRepetitions: 6, objectives: ['time', 'carbon'], budget: { maxRuns: 30, maxNodeHours: 12.5 } } }, LIMITS);
    if (!full.ok) throw new Error(JSON.stringify(full.issues));
    expect(full.spec.strategy).toMatchObject({ kind: 'adaptive', minRepetitions: 3, maxRepetitions: 6, objectives: ['time', 'carbon'], budget: { maxRuns: 30, maxNodeHours: 12.5 } });
  });

  test('each wrong field at its path', () => {
    expect(issuesOf({ ...base, strategy: 'greedy' })).toEqual([expect.objectContaining({ path: 'strategy.kind', message: 'kind must be one of grid, adaptive, search (or strategy: grid | adaptive | search)' })]);
    const wrong = issuesOf({ ...base, strategy: { kind: 'adaptive', minRepetitions: 1, confidence: 2, budget: { maxRuns: 0, minutes: 3 } } });
    expect(wrong.map((i) => i.path).sort()).toEqual(['strategy.budget.maxRuns', 'strategy.budget.minutes', 'strategy.confidence', 'strategy.minRepetitions']);
  });

  test('conflicts: repetitions beside adaptive, a maximum below the minimum, an import', () => {
    expect(issuesOf({ ...base, repetitions: 5, strategy: { kind: 'adaptive', minRepetitions: 3, maxRepetitions: 2 } })).toEqual([
      { path: 'repetitions', code: 'strategy_conflict', message: expect.stringContaining('remove repetitions (5) and set strategy.minRepetitions (first runs, 3) and strategy.maxRepetitions (at most, 2)') },
      { path: 'strategy.maxRepetitions', code: 'strategy_conflict', message: 'must be at least strategy.minRepetitions (3), got 2' },
    ]);
    expect(issuesOf({ name: 'i', execution: 'import', parameters: { a: [1] }, strategy: 'adaptive' })).toEqual([
      expect.objectContaining({ path: 'strategy', code: 'strategy_conflict', message: expect.stringContaining('needs execution: slurm') }),
    ]);
  });

  test('a budget below the first runs is a 400 that says how many it takes', () => {
    expect(issuesOf({ ...base, strategy: { kind: 'adaptive', minRepetitions: 3, budget: { maxRuns: 17 } } })).toEqual([
      { path: 'strategy.budget.maxRuns', code: 'budget_too_small', message: '17 runs cannot pay for the first runs: 6 configuration(s) × strategy.minRepetitions 3 = 18; raise it to at least 18 or remove configurations' },
    ]);
    expect(issuesOf({ ...base, strategy: { kind: 'adaptive', minRepetitions: 3, budget: { maxRuns: 18 } } })).toEqual([]);
  });

  test('the size limit counts the most an adaptive campaign may run', () => {
    // 6 configurations × up to 10 repetitions = 60 > 50; with a budget of 40 runs it fits.
    expect(issuesOf({ ...base, strategy: 'adaptive' }, { maxRuns: 50 })).toEqual([
      expect.objectContaining({ code: 'campaign_too_large', message: expect.stringMatching(/^the campaign has up to 60 runs \(6 configurations × up to 10 repetitions each\), more than the limit of 50; .*lower strategy\.maxRepetitions \(or set strategy\.budget\.maxRuns\)$/) }),
    ]);
    expect(issuesOf({ ...base, strategy: { kind: 'adaptive', budget: { maxRuns: 40 } } }, { maxRuns: 50 })).toEqual([]);
  });

  test('search: its defaults, a budget it needs, and the size limit on what it stores and runs', () => {
    const r = validateCampaign({ ...base, strategy: { kind: 'search', budget: { maxRuns: 4 } } }, LIMITS);
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    expect(r.spec.strategy).toEqual({ kind: 'search', repetitions: 1, seed: 1, objectives: ['time', 'energy'], budget: { maxRuns: 4 } });
    expect(issuesOf({ ...base, strategy: 'search' })).toEqual([expect.objectContaining({ path: 'strategy.budget', message: 'required: a search ends at its budget; set strategy.budget.maxRuns (e.g. 200)' })]);
    expect(issuesOf({ ...base, strategy: { kind: 'search', budget: { maxNodeHours: 3 } } })).toEqual([expect.objectContaining({ path: 'strategy.budget.maxRuns', message: expect.stringMatching(/^required: a search ends when its runs are spent/) })]);
    expect(issuesOf({ ...base, repetitions: 3, strategy: { kind: 'search', repetitions: 2, budget: { maxRuns: 1 } } })).toEqual([
      { path: 'repetitions', code: 'strategy_conflict', message: 'a search runs each configuration it tries strategy.repetitions times (2): remove repetitions (3) and set strategy.repetitions' },
      { path: 'strategy.budget.maxRuns', code: 'budget_too_small', message: "1 runs cannot pay for one configuration's strategy.repetitions (2); raise it to at least 2" },
    ]);
    // 1,000 × 2 configurations stored > 1,000; a budget of 2,000 runs > 1,000.
    const wide = { ...base, parameters: { a: Array.from({ length: 1000 }, (_, i) => i), b: ['x', 'y'] } };
    expect(issuesOf({ ...wide, strategy: { kind: 'search', budget: { maxRuns: 50 } } })).toEqual([
      expect.objectContaining({ code: 'campaign_too_large', message: expect.stringMatching(/^the search has 2,000 configurations to search, more than the limit of 1,000; .*lower strategy\.budget\.maxRuns$/) }),
    ]);
    expect(issuesOf({ ...base, strategy: { kind: 'search', budget: { maxRuns: 2000 } } })).toEqual([
      expect.objectContaining({ code: 'campaign_too_large', message: expect.stringMatching(/^the search has a budget of 2,000 runs, more than the limit of 1,000/) }),
    ]);
    expect(issuesOf({ ...wide, strategy: { kind: 'search', budget: { maxRuns: 50 } } }, { maxRuns: 2000 })).toEqual([]);
  });
});
