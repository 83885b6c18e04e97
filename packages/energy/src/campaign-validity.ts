// Whether a campaign's results can be published as they are (issue 26 §3): its completed runs'
// validity (validity.ts) counted, and what the counting rule (counted-figures.ts) left out.
import type { CampaignValidity, ValidityCheckName } from '@erg/spec';
import type { CountingOptions, StoredFigures } from './counted-figures';

/**
 * A campaign's validity over its completed runs' stored figures (null: a run without any). The
 * results are publishable when at least one run was checked and every run whose figures count
 * passed its gates: an invalid run must be left out (the spec's validity.excludeInvalid, or valid
 * runs only), and figures computed before erg checked validity count unchecked. A run without
 * figures counts nowhere (runsLeftOut says why), so it does not stand in the way.
 */
export function campaignValidity(completed: readonly (StoredFigures | null)[], options: CountingOptions = {}): CampaignValidity {
  let valid = 0;
  let invalid = 0;
  let unchecked = 0;
  let uncheckedCounted = 0;
  let excluded = 0;
  const failures: Partial<Record<ValidityCheckName, number>> = {};
  // The first reason given for each gate, as the example the note quotes.
  const example = new Map<ValidityCheckName, string>();
  for (const figures of completed) {
    const v = figures?.validity;
    if (!v) {
      unchecked++;
      if (figures) uncheckedCounted++;
      continue;
    }
    if (v.valid) {
      valid++;
      continue;
    }
    invalid++;
    if (v.excluded || options.validOnly) excluded++;
    v.failed.forEach((gate, i) => {
      failures[gate] = (failures[gate] ?? 0) + 1;
      if (!example.has(gate) && v.reasons[i]) example.set(gate, v.reasons[i]!);
    });
  }
  const runs = valid + invalid;
  const publishable = runs > 0 && invalid === excluded && uncheckedCounted === 0;
  return { publishable, runs, valid, invalid, unchecked, excluded, failures, note: noteOf({ runs, valid, invalid, excluded, uncheckedCounted, total: completed.length, example, failures, options }) };
}

function noteOf(c: {
  runs: number; valid: number; invalid: number; excluded: number; uncheckedCounted: number; total: number;
  example: ReadonlyMap<ValidityCheckName, string>; failures: Partial<Record<ValidityCheckName, number>>; options: CountingOptions;
}): string {
  if (c.runs === 0) return c.total === 0 ? 'no completed runs yet' : `none of the ${c.total} completed runs has validity checked figures`;
  const parts: string[] = [];
  if (c.invalid === 0) parts.push(`all ${c.runs} checked runs passed the validity gates`);
  else {
    const why = [...c.example].map(([gate, reason]) => `${reason}${c.failures[gate]! > 1 ? ` (and ${c.failures[gate]! - 1} more)` : ''}`);
    parts.push(`${c.invalid} of ${c.runs} runs invalid: ${why.join('; ')}`);
    if (c.excluded === c.invalid) parts.push(`left out of the figures (${c.options.validOnly ? 'valid runs only' : 'validity.excludeInvalid'}); ${runsCount(c.valid, 'valid run')} ${c.valid === 1 ? 'counts' : 'count'}`);
    else if (c.excluded > 0) parts.push(`${c.excluded} left out, ${c.invalid - c.excluded} counted flagged invalid`);
    else parts.push('they count, flagged invalid: leave them out with validity.excludeInvalid or ?valid=only');
  }
  if (c.uncheckedCounted > 0) parts.push(`the figures of ${runsCount(c.uncheckedCounted, 'run')} were computed before erg checked validity: they count unchecked`);
  return parts.join('; ');
}

function runsCount(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}
