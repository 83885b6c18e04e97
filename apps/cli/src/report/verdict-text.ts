// What both regression reports (JUnit, Markdown) say about a verdict, in one place so they say
// the same thing. Field meanings: packages/regress/src/verdict.ts and combine-verdicts.ts.
import { interval } from '@erg/format';
import type { CampaignVerdict, MetricVerdict } from '../api-types';
import { formatP, formatPercent } from '@erg/format';

export type { CampaignVerdict, MetricVerdict };
export type VerdictStatus = CampaignVerdict['status'];
export type RegressionPolicy = CampaignVerdict['policy'];

/** What `erg regress` hands to the report writers. */
export interface ReportInput {
  /** The suite's name; the JUnit suite is `erg.<suite>`. */
  suite: string;
  /** The campaign judged (the candidate). */
  campaignId: string;
  /** The campaign it was compared with; null when the suite has none yet. */
  baselineId: string | null;
  /**
   * The API's verdict (components['schemas']['CampaignVerdict'], or the client's data for it);
   * null when there was nothing to compare with (e.g. a suite's first run).
   */
  verdict: CampaignVerdict | null;
  /** A line from the caller shown in both reports (why there is no verdict, a link to the CI run, …). */
  note?: string;
  /**
   * The suite run's own outcome, when the report is about one. It can be worse than the campaign
   * verdict: a run whose repetitions failed is inconclusive (runs_failed) even if what did
   * complete passed, and the reports must say so.
   */
  run?: { status: VerdictStatus | 'running'; reasons: readonly string[] };
  /**
   * What the judged campaign's own results claim (its configurations compared with each other, not
   * with the baseline): the claims' summary at its confidence, or why it could not be read.
   * Absent: not asked for.
   */
  claims?: ReportClaims;
}

/** The judged campaign's claims as the reports carry them. */
export type ReportClaims =
  | { ok: true; summary: string; distinguishable: boolean }
  | { ok: false; why: string };

/** The claims in one line: "Claims of campaign X: no distinguishable difference … at 95 % (Holm over 3 comparisons)". */
export function claimsText(input: Pick<ReportInput, 'campaignId' | 'claims'>): string | null {
  const c = input.claims;
  if (!c) return null;
  return c.ok ? `Claims of campaign ${input.campaignId}: ${c.summary}` : `Claims of campaign ${input.campaignId}: not available (${c.why})`;
}

/** Suite-level reasons (see docs/suites.md) that the campaign verdict does not carry. */
export const SUITE_REASON_TEXT: Record<string, string> = {
  no_baseline: 'no earlier passing run to compare with: this run becomes the baseline',
  runs_failed: 'some repetitions did not complete (failed, timed out, out of memory or node failure), so the run cannot pass',
  campaign_cancelled: 'the campaign was cancelled before it finished',
};

/** Suite-level problems that make a run inconclusive whatever its verdict says. */
export function suiteProblems(input: ReportInput): string[] {
  return (input.run?.reasons ?? []).filter((r) => r === 'runs_failed' || r === 'campaign_cancelled');
}

/** The status a report leads with: the suite run's when known, else the verdict's. */
export function reportStatus(input: ReportInput): VerdictStatus | 'running' | null {
  return input.run?.status ?? input.verdict?.status ?? null;
}

/** One metric of one configuration. */
export interface VerdictEntry {
  key: string;
  verdict: MetricVerdict;
}

/** Symbols that carry the status without colour (shape and word differ). */
export const STATUS_SYMBOL: Record<VerdictStatus, string> = { pass: '✅', improved: '✅', regressed: '❌', inconclusive: '⚠️' };

const STATUS_RANK: Record<VerdictStatus, number> = { regressed: 0, inconclusive: 1, improved: 2, pass: 3 };
const METRIC_RANK: Record<MetricVerdict['metric'], number> = { time: 0, energy: 1 };

/**
 * Every configuration × metric verdict, the decisive ones first: those in `worst` (the ones that
 * decided the campaign's status, in the API's order), then the rest by status (regressed,
 * inconclusive, improved, pass), configuration order and metric.
 */
export function orderedVerdicts(verdict: CampaignVerdict): VerdictEntry[] {
  const all = verdict.configurations.flatMap((c, position) => c.verdicts.map((v) => ({ key: c.key, verdict: v, position })));
  const worstRank = (e: VerdictEntry) => {
    const i = verdict.worst.findIndex((w) => w.key === e.key && w.verdict.metric === e.verdict.metric);
    return i < 0 ? Number.POSITIVE_INFINITY : i;
  };
  return all
    .sort(
      (a, b) =>
        worstRank(a) - worstRank(b) ||
        STATUS_RANK[a.verdict.status] - STATUS_RANK[b.verdict.status] ||
        a.position - b.position ||
        METRIC_RANK[a.verdict.metric] - METRIC_RANK[b.verdict.metric],
    )
    .map(({ key, verdict: v }) => ({ key, verdict: v }));
}

/** "+12.3 %" or "—". */
export function changeText(v: MetricVerdict): string {
  return formatPercent(v.change, { signed: true });
}

/** "+8.1 % to +16.5 %" or "—". */
export function intervalText(v: MetricVerdict): string {
  const ci = interval(v.ci95);
  return ci ? `${formatPercent(ci[0], { signed: true })} to ${formatPercent(ci[1], { signed: true })}` : '—';
}

/** "time +12.3 % (95 % interval +8.1 % to +16.5 %), one-sided Welch p = 0.0012". */
export function figuresText(v: MetricVerdict): string {
  return `${v.metric} ${changeText(v)} (95 % interval ${intervalText(v)}), one-sided Welch p = ${formatP(v.p)}`;
}

/** "n 5 baseline / 5 candidate, CV 1.2 % / 3.4 %". */
export function samplesText(v: MetricVerdict): string {
  return `n ${v.nBaseline} baseline / ${v.nCandidate} candidate, CV ${formatPercent(v.cvBaseline)} / ${formatPercent(v.cvCandidate)}`;
}

/** Why a verdict is inconclusive, against the policy's numbers. */
export function inconclusiveText(v: MetricVerdict, policy: RegressionPolicy): string {
  if (v.reason === 'too_few_repetitions') {
    return `too few repetitions: ${v.nBaseline} in the baseline and ${v.nCandidate} in the candidate; the policy needs at least ${policy.minRepetitions} on each side`;
  }
  if (v.reason === 'too_noisy') {
    return `too noisy: coefficient of variation ${formatPercent(v.cvBaseline)} in the baseline and ${formatPercent(v.cvCandidate)} in the candidate; the policy allows at most ${formatPercent(policy.maxCv)}`;
  }
  return 'no verdict could be reached';
}

/** The policy in one sentence. */
export function policyText(policy: RegressionPolicy): string {
  return (
    `a change above ${formatPercent(policy.threshold, { signed: true })} with one-sided Welch p < ${policy.alpha} is a regression ` +
    `(below ${formatPercent(-policy.threshold, { signed: true })}, an improvement); a verdict needs at least ${policy.minRepetitions} repetitions ` +
    `per side and a coefficient of variation of at most ${formatPercent(policy.maxCv)}`
  );
}

/** Why a campaign-level verdict is inconclusive, from its reasons. */
export const CAMPAIGN_REASON_TEXT: Record<CampaignVerdict['reasons'][number], string> = {
  too_few_repetitions: 'too few repetitions',
  too_noisy: 'too noisy',
  no_verdicts: 'no configuration was measured in both campaigns',
};

/** The default explanation when there is no verdict. */
export function noVerdictText(input: ReportInput): string {
  return input.baselineId === null
    ? `no baseline yet: campaign ${input.campaignId} is the first of suite ${input.suite} and nothing was compared`
    : `no verdict: campaign ${input.campaignId} could not be compared with baseline ${input.baselineId}`;
}

const SEQUENTIAL_STOP_TEXT: Record<string, string> = {
  regressed: 'a regression crossed its boundary',
  decided: 'every configuration was decided before the maximum',
  max_repetitions: 'a configuration reached the maximum',
  runs_failed: 'runs did not complete',
  campaign_cancelled: 'the campaign was cancelled',
  no_baseline: 'first run: it ran the maximum to become the baseline',
};

/** A sequential suite run's looks in one line: where it stands, what it cost against the fixed design, why it stopped. */
export function sequentialText(s: { look: number; maxRepetitions: number; spending: string; runsUsed: number; runsFixed: number; stop: string | null }): string {
  const share = s.runsFixed > 0 ? ` (${Math.round((100 * s.runsUsed) / s.runsFixed)} %)` : '';
  const why = s.stop === null ? 'still adding repetitions' : `stopped: ${SEQUENTIAL_STOP_TEXT[s.stop] ?? s.stop}`;
  return `sequential (${s.spending}, up to ${s.maxRepetitions} repetitions): look ${s.look}, ${s.runsUsed} of the fixed design's ${s.runsFixed} runs${share}; ${why}`;
}
