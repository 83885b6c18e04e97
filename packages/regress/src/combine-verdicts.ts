import type { CampaignInconclusiveReason, CampaignVerdict } from '@erg/spec';
import type { Verdict, VerdictStatus } from './verdict';

// The campaign verdict's shape is the API's (without the campaign and baseline ids), in @erg/spec.
export type { CampaignInconclusiveReason, CampaignVerdict } from '@erg/spec';

/**
 * One verdict for a campaign: regressed if any verdict regressed; else inconclusive if any is
 * inconclusive (or there are none); else improved if any improved; else pass. A regression
 * wins over noise elsewhere because CI must fail on the regression it has already shown.
 */
export function campaignVerdict(perConfig: readonly { key: string; verdicts: readonly Verdict[] }[]): CampaignVerdict {
  const counts: Record<VerdictStatus, number> = { pass: 0, regressed: 0, improved: 0, inconclusive: 0 };
  const all = perConfig.flatMap(({ key, verdicts }) => verdicts.map((verdict) => ({ key, verdict })));
  for (const { verdict } of all) counts[verdict.status]++;
  const having = (s: VerdictStatus) => all.filter((e) => e.verdict.status === s);
  const byChange = (sign: 1 | -1) => (x: { verdict: Verdict }, y: { verdict: Verdict }) => sign * ((y.verdict.change ?? 0) - (x.verdict.change ?? 0));

  if (counts.regressed > 0) return { status: 'regressed', counts, reasons: [], worst: having('regressed').sort(byChange(1)) };
  if (counts.inconclusive > 0 || all.length === 0) {
    const tally = new Map<CampaignInconclusiveReason, number>();
    for (const { verdict } of having('inconclusive')) if (verdict.reason) tally.set(verdict.reason, (tally.get(verdict.reason) ?? 0) + 1);
    if (all.length === 0) tally.set('no_verdicts', 1);
    const reasons = [...tally.entries()].sort((x, y) => y[1] - x[1]).map(([r]) => r);
    return { status: 'inconclusive', counts, reasons, worst: having('inconclusive') };
  }
  if (counts.improved > 0) return { status: 'improved', counts, reasons: [], worst: having('improved').sort(byChange(-1)) };
  return { status: 'pass', counts, reasons: [], worst: [] };
}
