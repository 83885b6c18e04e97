import {
  findSuitePolicy, finishSuiteRun, getCampaignSummary, suiteRunsReadyToJudge, type Database, type SuiteRunRecord, type SuiteRunOutcome,
} from '@erg/db';
import { campaignVerdictView } from '@erg/results';
import type { RegressionPolicyOutput } from '@erg/spec';

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
  const counts = summary?.runCounts ?? {};
  const incomplete = (summary?.totalRuns ?? 0) - (counts['completed'] ?? 0);
  const trouble = summary?.state === 'cancelled' ? 'campaign_cancelled' : incomplete > 0 ? 'runs_failed' : null;
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
    const outcome = await judgeSuiteRun(db, run, policy);
    if (await finishSuiteRun(db, run.id, outcome)) judged.push(run);
  }
  return judged;
}
