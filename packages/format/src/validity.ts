// A run's validity gates and a campaign's publishability (issue 26 §3) as people read them, in the
// CLI and the web app alike. The gates themselves are @erg/energy's (validity.ts).
import { formatNumber, formatPercent, formatTime, NO_VALUE } from './units';

/** One gate of a run as the API gives it (RunValidity.checks). */
export interface ValidityCheckLike {
  check: string;
  status: 'pass' | 'fail' | 'not_measured';
  value: number | null;
  limit: number;
  where: string | null;
  detail: string;
}

/** The gates' names as a person reads them. */
export const VALIDITY_CHECK_LABELS: Readonly<Record<string, string>> = {
  sample_share: 'samples kept',
  longest_gap: 'longest gap',
  sampling_interval: 'sampling interval',
  clock_offset: 'clock offset',
  clock_spread: 'clock spread',
  counter_agreement: 'counter vs power',
  idle_stability: 'idle stability',
};

/** A gate's value (or limit) in its unit: a share, seconds, a ratio to the requested interval, ms, a relative difference, a CV. */
export function validityValueText(check: string, value: number | null): string {
  if (value === null) return NO_VALUE;
  switch (check) {
    case 'sample_share':
    case 'counter_agreement':
      return formatPercent(value);
    case 'longest_gap':
      return formatTime(value);
    case 'sampling_interval':
      return `${formatNumber(value)} ×`;
    case 'clock_offset':
    case 'clock_spread':
      return formatTime(value / 1000);
    case 'idle_stability':
      return `CV ${formatNumber(value)}`;
    default:
      return formatNumber(value);
  }
}

/** The columns of a run's gates table, and its rows: gate, status, worst value, limit, where. */
export const VALIDITY_COLUMNS = ['gate', 'status', 'worst', 'limit', 'where'] as const;

export function validityRows(checks: readonly ValidityCheckLike[]): string[][] {
  return checks.map((c) => {
    const bound = c.check === 'sample_share' ? '≥ ' : '≤ ';
    const status = c.status === 'not_measured' ? 'not measured' : c.status;
    return [VALIDITY_CHECK_LABELS[c.check] ?? c.check, status, validityValueText(c.check, c.value), bound + validityValueText(c.check, c.limit), c.where ?? c.detail];
  });
}

/** A run's validity in a line: `valid` or `invalid: <reasons>`; null from figures computed before erg checked validity. */
export function runValidityText(v: { valid: boolean; reasons: readonly string[]; excluded?: boolean } | null | undefined): string | null {
  if (!v) return null;
  if (v.valid) return 'valid: every validity gate passed or had nothing to judge';
  return `invalid${v.excluded ? ' (left out of the results: validity.excludeInvalid)' : ''}: ${v.reasons.join('; ')}`;
}

/** A campaign's publishability in a line: `publishable: no — 2 of 8 runs invalid: …`; null from an API that does not say. */
export function publishableLine(v: { publishable: boolean; note: string } | null | undefined): string | null {
  return v ? `publishable: ${v.publishable ? 'yes' : 'no'} — ${v.note}` : null;
}
