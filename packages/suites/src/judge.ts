import {
  addSuiteRunRepetitions, findSuitePolicy, finishSuiteRun, getCampaignSummary, suiteRunConfigurations, suiteRunsReadyToJudge,
  type CampaignSummary, type Database, type SuiteRunRecord, type SuiteRunOutcome,
} from '@erg/db';
import { campaignVerdictView, sequentialCampaignVerdict } from './campaign-verdict';
import type { RegressionPolicyOutput, SequentialPolicyOutput, SequentialRunView } from '@erg/spec';

/**
 * Why a suite run's campaign cannot pass or improve: it was cancelled, or some of its runs neither
 * completed nor were withdrawn by its strategy (failed, timed out, cancelled); null when neither.
 */
function campaignTrouble(summary: CampaignSummary | null): 'campaign_cancelled' | 'runs_failed' | null {
  if (summary?.state === 'cancelled') return 'campaign_cancelled';
  const incomplete = (summary?.totalRuns ?? 0) - (summary?.runCounts['completed'] ?? 0) - (summary?.withdrawnRuns ?? 0);
  return incomplete > 0 ? 'runs_failed' : null;
}

/**
 * The outcome of a suite run whose campaign has finished.
 * - No baseline (the suite's first good run): pass if every run completed — it becomes the
 *   baseline — else inconclusive.
 * - With a baseline: the campaign verdict (Welch per configuration and metric, see @erg/regress),
 *   except that a campaign with failed or cancelled runs cannot pass or improve: missing
 *   repetitions are an infrastructure problem to look at, not a result. A regression already
 *   shown by the runs that did complete stands.
 */
export async function judgeSuiteRun(db: Database, run: SuiteRunRecord, policy: RegressionPolicyOutput): Promise<SuiteRunOutcome> {
  const summary = await getCampaignSummary(db, run.campaignId);
  const trouble = campaignTrouble(summary);
  if (!run.baselineCampaignId) {
    return trouble ? { status: 'inconclusive', reasons: [trouble, 'no_baseline'], verdict: null } : { status: 'pass', reasons: ['no_baseline'], verdict: null };
  }
  const verdict = await campaignVerdictView(db, run.campaignId, run.baselineCampaignId, policy);
  if (verdict.status === 'regressed') return { status: 'regressed', reasons: [], verdict };
  if (trouble) return { status: 'inconclusive', reasons: [trouble, ...verdict.reasons], verdict };
  return { status: verdict.status, reasons: [...verdict.reasons], verdict };
}

/**
 * Judges every suite run whose campaign has no unfinished run left. Returns the ones this call
 * judged (another process judging the same run concurrently makes this one skip it), so the
 * caller announces each verdict exactly once.
 */
export async function judgeFinishedSuiteRuns(db: Database): Promise<SuiteRunRecord[]> {
  const ready = await suiteRunsReadyToJudge(db);
  const judged: SuiteRunRecord[] = [];
  for (const run of ready) {
    const policy = await findSuitePolicy(db, run.suiteId);
    if (!policy) continue;
    if (policy.sequential) {
      if (await lookAtSuiteRun(db, run, { ...policy, sequential: policy.sequential })) judged.push(run);
      continue;
    }
    const outcome = await judgeSuiteRun(db, run, policy);
    if (await finishSuiteRun(db, run.id, outcome)) judged.push(run);
  }
  return judged;
}

/**
 * What a sequential suite run stores at each look (suite_runs.sequential): its view without
 * runsUsed (the campaign's count, read when shown), and whether every configuration has the
 * maximum — only such a run may become a last-passing baseline (lastPassingCampaign fullOnly).
 */
export type SequentialState = Omit<SequentialRunView, 'runsUsed'> & { full: boolean };

/** The state of a sequential suite run before its first look. */
export function initialSequentialState(sequential: SequentialPolicyOutput, configurations: number, full: boolean): SequentialState {
  return { look: 0, maxRepetitions: sequential.maxRepetitions, spending: sequential.spending, runsFixed: configurations * sequential.maxRepetitions, stop: null, configurations: [], full };
}

/**
 * One look at a sequential suite run whose runs have all ended (issue 16 §2; design in
 * @erg/regress's sequential.ts). Either it stops — its outcome recorded by the rules of
 * judgeSuiteRun, with why it stopped — or the configurations still undecided get one more
 * repetition (pending runs the scheduler submits like any other) and the run stays `running`
 * until they have ended. Runs that failed or a cancelled campaign stop it at once: missing
 * repetitions are an infrastructure problem, not something more repetitions fix. True when this
 * call recorded the verdict.
 */
export async function lookAtSuiteRun(db: Database, run: SuiteRunRecord, policy: RegressionPolicyOutput & { sequential: SequentialPolicyOutput }): Promise<boolean> {
  const [summary, configs] = await Promise.all([getCampaignSummary(db, run.campaignId), suiteRunConfigurations(db, run.campaignId)]);
  const trouble = campaignTrouble(summary);
  const max = policy.sequential.maxRepetitions;
  const state = (stop: SequentialState['stop'], configurations: SequentialState['configurations'] = []): SequentialState => ({
    ...initialSequentialState(policy.sequential, configs.length, configs.every((c) => c.maxRepetition >= max)),
    look: run.look + 1, stop, configurations,
  });
  const finish = (outcome: SuiteRunOutcome, s: SequentialState) => finishSuiteRun(db, run.id, outcome, { at: run.look, sequential: s });

  if (!run.baselineCampaignId) {
    const outcome: SuiteRunOutcome = trouble ? { status: 'inconclusive', reasons: [trouble, 'no_baseline'], verdict: null } : { status: 'pass', reasons: ['no_baseline'], verdict: null };
    return finish(outcome, state(trouble ?? 'no_baseline'));
  }
  const repetitions = new Map(configs.map((c) => [c.key, c.maxRepetition]));
  const { view, decision } = await sequentialCampaignVerdict(db, run.campaignId, run.baselineCampaignId, policy, repetitions);
  if (decision.next === 'continue' && !trouble) {
    const adds = configs.filter((c) => decision.undecided.includes(c.key)).map((c) => ({ configurationId: c.configurationId, position: c.position, after: c.maxRepetition }));
    await addSuiteRunRepetitions(db, run.id, run.look, adds, state(null, decision.configurations));
    return false;
  }
  const stop = view.status === 'regressed' ? 'regressed' : (trouble ?? decision.stop ?? 'decided');
  const outcome: SuiteRunOutcome =
    view.status === 'regressed' ? { status: 'regressed', reasons: [], verdict: view }
    : trouble ? { status: 'inconclusive', reasons: [trouble, ...view.reasons], verdict: view }
    : { status: view.status, reasons: [...view.reasons], verdict: view };
  return finish(outcome, state(stop, decision.configurations));
}
