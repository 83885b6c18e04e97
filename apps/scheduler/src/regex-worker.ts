/**
 * The body of a UserRegexRunner worker thread: the only place where a user's regular expression
 * runs. Nothing here may touch the scheduler's state; a task that runs too long is ended by the
 * runner terminating this whole thread.
 *
 * Before each phase pattern runs, its index is written to the shared `progress` slot, so that the
 * runner can say which pattern was running when it had to terminate the thread.
 */
import { readlinkSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
// Subpaths: a worker thread loads the pure parts, not the packages' database sides.
import { runSearchStepInput, type SearchStepInput } from '@erg/strategy/search-runner';
import { compileUserRegex, type CompiledUserRegex } from '@erg/spec/user-regex';
import { forEachLine, forEachLineFromEnd } from './log-lines';
import { foldMatch, isSettled } from './metric-fold';
import { matchPhases } from './phase-match';
import type { FoldMetricInput, FoldMetricOutput, MatchPhasesInput, RegexTaskKind, RegexTasks, TaskReply, TaskRequest } from './regex-runner';

// The runner's READY (a value import would load the runner, and node:worker_threads' Worker, here).
const READY = 'ready';

const progress = new Int32Array((workerData as { progress: SharedArrayBuffer }).progress);
// This thread's Linux thread id, where the runner reads its CPU time (regex-runner.ts): /proc/thread-self is "<pid>/task/<tid>".
try {
  Atomics.store(progress, 1, Number(readlinkSync('/proc/thread-self').split('/').at(-1)) || 0);
} catch {
  // Not Linux: the runner counts wall-clock time.
}
const decoder = new TextDecoder('utf-8');
// Patterns repeat for every batch of a run; a small cache saves compiling them again.
const compiled = new Map<string, CompiledUserRegex>();
const MAX_COMPILED = 256;

/** The compiled pattern, or why RE2 refuses it (a spec stored before erg ran regexes with RE2). */
function compile(source: string): CompiledUserRegex {
  let result = compiled.get(source);
  if (!result) {
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    result = compileUserRegex(source);
    compiled.set(source, result);
  }
  return result;
}

/** The batch's bytes as text (shared with the batch's other tasks, hence decoded here, not handed over). */
function textOf(input: { bytes: SharedArrayBuffer; length: number }): { text: string; bytes: Uint8Array } {
  const bytes = new Uint8Array(input.bytes, 0, input.length);
  return { text: decoder.decode(bytes), bytes };
}

/**
 * Every match of one metric's pattern in each line of the batch, folded into its metric. A `last`
 * metric needs only the batch's last numeric match: its lines are tried from the end, and the
 * first one (from the end) that gives a number settles the batch (the batches come in order).
 */
function foldMetric(input: FoldMetricInput): FoldMetricOutput {
  const { fold } = input;
  if (isSettled(fold)) return { fold };
  const result = compile(input.pattern);
  // The reason fails the task, which names the metric to the researcher.
  if (!result.ok) throw new Error(result.problem);
  const re = result.regex;
  const captures = re.groupCount() > 0;
  const { text } = textOf(input);
  /** Folds the matches of one line; true to stop. */
  const foldLine = (start: number, end: number): boolean => {
    const line = text.slice(start, end);
    // The DFA's yes or no first: it captures nothing, and most lines of a log do not match.
    if (!re.test(line)) return false;
    const values = fold.values;
    const m = re.matcher(line);
    while (m.find()) {
      foldMatch(fold, captures ? (m.group(1) ?? undefined) : undefined);
      if (isSettled(fold)) return true;
    }
    return fold.reduce === 'last' && fold.values > values;
  };
  if (fold.reduce === 'last') forEachLineFromEnd(text, foldLine);
  else forEachLine(text, foldLine);
  return { fold };
}

/** The phase marks of the batch (phase-match.ts). */
function findPhaseMarks(input: MatchPhasesInput) {
  const { text, bytes } = textOf(input);
  const marks = matchPhases(text, bytes, input.phases, compile, (k) => Atomics.store(progress, 0, k));
  Atomics.store(progress, 0, -1);
  return marks;
}

const TASKS = {
  'fold-metric': foldMetric,
  'match-phases': findPhaseMarks,
  // Not a regex: a search campaign's step, which must not hold the scheduler's event loop either.
  'search-step': (input: SearchStepInput) => runSearchStepInput(input),
};

parentPort!.on('message', (request: TaskRequest) => {
  let reply: TaskReply;
  try {
    // The request's kind and input come as a pair (TaskRequest); TypeScript cannot narrow the lookup by it.
    const task = TASKS[request.kind] as (input: unknown) => RegexTasks[RegexTaskKind]['output'];
    reply = { id: request.id, ok: true, output: task(request.input) };
  } catch (err) {
    reply = { id: request.id, ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  parentPort!.postMessage(reply);
});
parentPort!.postMessage(READY);
