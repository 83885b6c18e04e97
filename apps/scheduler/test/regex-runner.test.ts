import { monitorEventLoopDelay } from 'node:perf_hooks';
import { newFold } from '../src/metric-fold';
import { RegexBudget, RegexBudgetExceededError, UserRegexRunner } from '../src/regex-runner';

const bytesOf = (text: string) => {
  const encoded = new TextEncoder().encode(text);
  return { bytes: encoded.buffer as ArrayBuffer, length: encoded.length };
};

describe('UserRegexRunner', () => {
  let runner: UserRegexRunner;
  beforeEach(() => {
    runner = new UserRegexRunner({ workers: 2 });
  });
  afterEach(() => runner.close());

  test('folds the matches of each pattern in a worker and hands the folds back', async () => {
    const out = await runner.run(
      'fold-matches',
      { patterns: ['loss=([0-9.]+)', '^step'], folds: [newFold('min'), newFold('count')], ...bytesOf('step loss=3\nstep loss=1.5\nx loss=2\n') },
      new RegexBudget(10_000),
    );
    expect(out.folds[0]).toMatchObject({ matches: 3, values: 3, min: 1.5, first: 3, last: 2 });
    expect(out.folds[1]).toMatchObject({ matches: 2 });
  });

  test('stops a catastrophically backtracking regex at its budget, names it, and keeps the scheduler responsive', async () => {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const budget = new RegexBudget(500);
    const err = await runner
      .run('fold-matches', { patterns: ['ok=(1)', '^(a+)+$'], folds: [newFold('last'), newFold('count')], ...bytesOf(`ok=1\n${'a'.repeat(40)}!\n`) }, budget)
      .catch((e: unknown) => e);
    delay.disable();
    expect(err).toBeInstanceOf(RegexBudgetExceededError);
    expect(err).toMatchObject({ code: 'ERG_REGEX_BUDGET_EXCEEDED', budgetMs: 500, patternIndex: 1 });
    expect(budget.remainingMs).toBe(0);
    // The regex ran in a worker: this thread's event loop never waited on it. (Without the worker
    // this line would not be reached for longer than anyone would wait.)
    expect(delay.max / 1e6).toBeLessThan(1000);
    // The terminated worker was replaced: the pool still works.
    const after = await runner.run('fold-matches', { patterns: ['n=([0-9]+)'], folds: [newFold('sum')], ...bytesOf('n=2\nn=3\n') }, new RegexBudget(5000));
    expect(after.folds[0]!.sum).toBe(5);
  }, 20_000);

  test('a spent budget refuses further tasks at once', async () => {
    const budget = new RegexBudget(300);
    await runner.run('fold-matches', { patterns: ['^(a+)+$'], folds: [newFold('count')], ...bytesOf(`${'a'.repeat(40)}!`) }, budget).catch(() => undefined);
    const err = await runner.run('fold-matches', { patterns: ['x'], folds: [newFold('count')], ...bytesOf('x') }, budget).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERG_REGEX_BUDGET_EXCEEDED', patternIndex: null });
  }, 20_000);

  test('more tasks than workers wait their turn, and waiting does not count against a budget', async () => {
    const budget = new RegexBudget(10_000);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => runner.run('fold-matches', { patterns: ['v=([0-9]+)'], folds: [newFold('last')], ...bytesOf(`v=${i}\n`) }, budget)),
    );
    expect(results.map((r) => r.folds[0]!.last)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(runner.workerCount).toBe(2);
  });
});
