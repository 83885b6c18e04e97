import { readlinkSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { newFold } from '../src/metric-fold';
import { RegexBudget, RegexBudgetExceededError, RegexTaskError, threadCpuMs, UserRegexRunner, WALL_FACTOR, type SharedBatch } from '../src/regex-runner';

const batchOf = (text: string): SharedBatch => {
  const encoded = new TextEncoder().encode(text);
  const bytes = new SharedArrayBuffer(encoded.length);
  new Uint8Array(bytes).set(encoded);
  return { bytes, length: encoded.length };
};

/** Lines on which `(?:.{0,30}a){10}c` takes RE2 ~15 ms each: linear in the text, but slow. */
function slowLines(count: number): string {
  let seed = 11;
  const letter = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 2 === 0 ? 'a' : 'b');
  return Array.from({ length: count }, () => `${Array.from({ length: 198 }, letter).join('')}cd\n`).join('');
}
const SLOW = '(?:.{0,30}a){10}c';

describe('UserRegexRunner', () => {
  let runner: UserRegexRunner;
  beforeEach(() => {
    runner = new UserRegexRunner({ workers: 2 });
  });
  afterEach(() => runner.close());

  test("folds every match of a metric's pattern, line by line, in a worker and hands the fold back", async () => {
    const batch = batchOf('step loss=3\nstep loss=1.5 loss=2\n');
    const min = await runner.run('fold-metric', { pattern: 'loss=([0-9.]+)', fold: newFold('min'), ...batch }, new RegexBudget(10_000));
    expect(min.fold).toMatchObject({ matches: 3, values: 3, min: 1.5, first: 3, last: 2 });
    const count = await runner.run('fold-metric', { pattern: '^step', fold: newFold('count'), ...batch }, new RegexBudget(10_000));
    expect(count.fold).toMatchObject({ matches: 2 });
  });

  test('a `last` metric takes the batch’s last numeric match, read from the end, over what earlier batches gave', async () => {
    const earlier = { ...newFold('last'), matches: 1, values: 1, last: 9 };
    const out = await runner.run('fold-metric', { pattern: 'v=([0-9]*)', fold: earlier, ...batchOf('v=1\nv=2 v=3 x\nv=\nnoise\n') }, new RegexBudget(10_000));
    expect(out.fold.last).toBe(3);
    const none = await runner.run('fold-metric', { pattern: 'v=([0-9]*)', fold: out.fold, ...batchOf('v=\nnoise') }, new RegexBudget(10_000));
    expect(none.fold.last).toBe(3);
  });

  test('stops a regex at its budget, leaves the scheduler responsive, and replaces the worker', async () => {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const budget = new RegexBudget(500);
    const err = await runner.run('fold-metric', { pattern: SLOW, fold: newFold('count'), ...batchOf(slowLines(2000)) }, budget).catch((e: unknown) => e);
    delay.disable();
    expect(err).toBeInstanceOf(RegexBudgetExceededError);
    expect(err).toMatchObject({ code: 'ERG_REGEX_BUDGET_EXCEEDED', budgetMs: 500 });
    expect(budget.remainingMs).toBe(0);
    // The regex ran in a worker: this thread's event loop never waited the 30 s it would take.
    expect(delay.max / 1e6).toBeLessThan(1000);
    // The terminated worker was replaced: the pool still works.
    const after = await runner.run('fold-metric', { pattern: 'n=([0-9]+)', fold: newFold('sum'), ...batchOf('n=2\nn=3\n') }, new RegexBudget(5000));
    expect(after.fold.sum).toBe(5);
  }, 20_000);

  test("a task is charged its thread's CPU time: waiting for a CPU does not spend its budget", async () => {
    // A CPU clock that runs at a hundredth of the wall clock: the thread got a hundredth of a core,
    // as on a machine shared with many busy processes. Matching 40 slow lines (~0.6 s on an idle
    // machine) costs a few ms of a 100 ms budget; its wall-clock time is bounded far beyond (100×).
    const slowCpu = new UserRegexRunner({ workers: 1, cpuClock: () => performance.now() / 100, wallFactor: 100 });
    try {
      const budget = new RegexBudget(100);
      const started = performance.now();
      const out = await slowCpu.run('fold-metric', { pattern: SLOW, fold: newFold('count'), ...batchOf(slowLines(40)) }, budget);
      const wallMs = performance.now() - started;
      // It ran past its budget in wall-clock time (what it was once charged) and finished.
      expect(wallMs).toBeGreaterThan(100);
      expect(out.fold.matches).toBeGreaterThan(0);
      // Charged the CPU clock's time (a hundredth of the wall clock's), not the wall clock's.
      expect(100 - budget.remainingMs).toBeLessThan(wallMs / 100 + 20);
    } finally {
      await slowCpu.close();
    }
  }, 30_000);

  test(`however little CPU a task gets, it ends at ${WALL_FACTOR} times its budget in wall-clock time`, async () => {
    const noCpu = new UserRegexRunner({ workers: 1, cpuClock: () => 0 });
    try {
      const started = performance.now();
      const err = await noCpu.run('fold-metric', { pattern: SLOW, fold: newFold('count'), ...batchOf(slowLines(2000)) }, new RegexBudget(200)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RegexBudgetExceededError);
      expect(performance.now() - started).toBeGreaterThanOrEqual(WALL_FACTOR * 200 - 5);
      // The 2,000 lines would take ~30 s: it was stopped, not finished.
      expect(performance.now() - started).toBeLessThan(15_000);
    } finally {
      await noCpu.close();
    }
  }, 30_000);

  test("threadCpuMs reads a thread's CPU time from /proc, and null for a thread that is not there", async () => {
    // This thread's id, as the workers find theirs; its CPU time grows while it computes (at
    // whatever share of a core it gets: the loop runs until it has used 100 ms, by the deadline).
    const tid = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    const before = threadCpuMs(tid)!;
    const processBefore = process.cpuUsage();
    expect(before).toBeGreaterThan(0);
    const deadline = performance.now() + 10_000;
    while (threadCpuMs(tid)! - before < 100 && performance.now() < deadline) for (let i = 0; i < 1e5; i++) Math.sqrt(i);
    const used = threadCpuMs(tid)! - before;
    expect(used).toBeGreaterThanOrEqual(100);
    // No more than the whole process used meanwhile (/proc counts in 10 ms ticks).
    const processUsed = process.cpuUsage(processBefore);
    expect(used).toBeLessThanOrEqual((processUsed.user + processUsed.system) / 1000 + 20);
    expect(threadCpuMs(2_000_000_000)).toBeNull();
    expect(threadCpuMs(0)).toBeNull();
  });

  test('a spent budget refuses further tasks at once; another budget is untouched', async () => {
    const budget = new RegexBudget(300);
    await runner.run('fold-metric', { pattern: SLOW, fold: newFold('count'), ...batchOf(slowLines(2000)) }, budget).catch(() => undefined);
    const err = await runner.run('fold-metric', { pattern: 'x', fold: newFold('count'), ...batchOf('x') }, budget).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ERG_REGEX_BUDGET_EXCEEDED', patternIndex: null });
    const other = await runner.run('fold-metric', { pattern: 'x', fold: newFold('count'), ...batchOf('x') }, new RegexBudget(300));
    expect(other.fold.matches).toBe(1);
  }, 20_000);

  test('a pattern RE2 refuses fails its task with the reason', async () => {
    const err = await runner.run('fold-metric', { pattern: '(a)\\1', fold: newFold('count'), ...batchOf('aa') }, new RegexBudget(5000)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegexTaskError);
    expect((err as Error).message).toMatch(/^RE2 syntax: backreferences /);
  });

  test('more tasks than workers wait their turn, and waiting does not count against a budget', async () => {
    const budget = new RegexBudget(10_000);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => runner.run('fold-metric', { pattern: 'v=([0-9]+)', fold: newFold('last'), ...batchOf(`v=${i}\n`) }, budget)),
    );
    expect(results.map((r) => r.fold.last)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(runner.workerCount).toBe(2);
  });
});
