/**
 * The body of a UserRegexRunner worker thread: the only place where a user's regular expression
 * runs. Nothing here may touch the scheduler's state; a task that runs too long is ended by the
 * runner terminating this whole thread.
 *
 * Before each pattern runs, its index is written to the shared `progress` slot, so that the
 * runner can say which pattern was running when it had to terminate the thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
// The subpath: a worker thread loads the pure search step, not the strategy's database side.
import { runSearchStepInput, type SearchStepInput } from '@erg/strategy/search-runner';
import { foldMatch, isSettled, type MetricFold } from './metric-fold';
import { matchPhases } from './phase-match';
import type { TaskRequest, TaskReply, FoldMatchesInput, FoldMatchesOutput, RegexTaskKind, RegexTasks } from './regex-runner';

// The runner's READY (a value import would load the runner, and node:worker_threads' Worker, here).
const READY = 'ready';

const progress = new Int32Array((workerData as { progress: SharedArrayBuffer }).progress);
const decoder = new TextDecoder('utf-8');
// Patterns repeat for every chunk of a run; a small cache saves recompiling them.
const compiled = new Map<string, RegExp>();
const MAX_COMPILED = 256;

function regex(source: string): RegExp {
  let re = compiled.get(source);
  if (!re) {
    if (compiled.size >= MAX_COMPILED) compiled.clear();
    // g: every match; m: ^ and $ anchor at each line of the log.
    re = new RegExp(source, 'gm');
    compiled.set(source, re);
  }
  return re;
}

/** Every match of every pattern in `text`, folded into its metric (settled folds are skipped); then the phase marks. */
function foldMatches(input: FoldMatchesInput): FoldMatchesOutput {
  const bytes = new Uint8Array(input.bytes, 0, input.length);
  const text = decoder.decode(bytes);
  const folds: MetricFold[] = input.folds;
  input.patterns.forEach((source, i) => {
    const fold = folds[i]!;
    if (isSettled(fold)) return;
    Atomics.store(progress, 0, i);
    const re = regex(source);
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      // An empty match would match again at the same place for ever.
      if (m[0] === '') re.lastIndex++;
      foldMatch(fold, m[1]);
      if (isSettled(fold)) break;
    }
  });
  const marks = input.phases ? matchPhases(text, bytes, input.phases, regex, (k) => Atomics.store(progress, 0, input.patterns.length + k)) : undefined;
  Atomics.store(progress, 0, -1);
  return marks ? { folds, marks } : { folds };
}

const TASKS = {
  'fold-matches': foldMatches,
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
