import { campaignSummaryView, getCampaignSummary, type Database, type SuiteRecord, type SuiteRunRecord } from '@erg/db';
import type { CampaignVerdictView, SuiteRunView, SuiteView } from '@erg/spec';
import { nextRunAt } from './cron';
import type { SequentialState } from './judge';
import { viewerDeliveryError } from './webhook';

/** Database rows → API bodies (and webhook bodies). The webhook secret has no way out of here. */

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

function clusterOf(template: unknown): string | null {
  const cluster = (template as { cluster?: unknown } | null)?.cluster;
  return typeof cluster === 'string' ? cluster : null;
}

export function suiteView(suite: SuiteRecord, lastRun: SuiteRunRecord | null, now: Date = new Date()): SuiteView {
  return {
    id: suite.id,
    name: suite.name,
    description: suite.description,
    cluster: clusterOf(suite.template),
    campaign: suite.template,
    schedule: suite.cron ? { cron: suite.cron, timezone: suite.timezone, nextRunAt: iso(nextRunAt(suite.cron, suite.timezone, now)) } : null,
    baseline: { policy: suite.baselinePolicy === 'pinned' ? 'pinned' : 'last-passing', campaignId: suite.baselineCampaignId },
    regression: suite.policy as SuiteView['regression'],
    webhook: suite.webhookUrl ? { url: suite.webhookUrl, signed: suite.webhookSecret !== null } : null,
    lastRun: lastRun
      ? { id: lastRun.id, campaignId: lastRun.campaignId, status: lastRun.status as SuiteRunView['status'], createdAt: lastRun.createdAt.toISOString(), finishedAt: iso(lastRun.finishedAt) }
      : null,
    createdAt: suite.createdAt.toISOString(),
    updatedAt: suite.updatedAt.toISOString(),
  };
}

export async function suiteRunView(db: Database, run: SuiteRunRecord, suiteName: string): Promise<SuiteRunView> {
  const summary = await getCampaignSummary(db, run.campaignId);
  if (!summary) throw new Error(`suite run ${run.id}: campaign ${run.campaignId} is gone`);
  return {
    id: run.id,
    suite: suiteName,
    campaignId: run.campaignId,
    trigger: run.trigger === 'schedule' ? 'schedule' : 'manual',
    baselineId: run.baselineCampaignId,
    status: run.status as SuiteRunView['status'],
    reasons: run.reasons,
    campaign: campaignSummaryView(summary),
    verdict: (run.verdict ?? null) as CampaignVerdictView | null,
    createdAt: run.createdAt.toISOString(),
    finishedAt: iso(run.finishedAt),
    webhook: run.webhookStatus
      ? { status: run.webhookStatus as 'pending' | 'delivered' | 'failed', attempts: run.webhookAttempts, lastError: viewerDeliveryError(run.webhookError), deliveredAt: iso(run.webhookDeliveredAt) }
      : null,
    sequential: sequentialView(run.sequential, summary.totalRuns),
  };
}

/** A sequential suite run's looks as stored, with the runs its campaign has now; null for the fixed design. */
function sequentialView(stored: unknown, runsUsed: number): SuiteRunView['sequential'] {
  if (stored === null || typeof stored !== 'object') return null;
  const s = stored as SequentialState;
  return { look: s.look, maxRepetitions: s.maxRepetitions, spending: s.spending, runsUsed, runsFixed: s.runsFixed, stop: s.stop, configurations: s.configurations };
}
