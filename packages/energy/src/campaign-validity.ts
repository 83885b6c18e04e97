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
  return validityOfTally(tallyValidity(completed, options), options);
}

/**
 * The counts campaignValidity decides on, over some of a campaign's completed runs: tallies of
 * parts of the runs, added in the runs' order (addValidityTallies), are the tally of them all — a
 * reader that keeps each configuration's tally while its runs are unchanged adds 10,000 tallies
 * rather than reading 100,000 runs' validity again.
 */
export interface ValidityTally {
  total: number;
  valid: number;
  invalid: number;
  unchecked: number;
  uncheckedCounted: number;
  excluded: number;
  failures: Partial<Record<ValidityCheckName, number>>;
  /** The first reason given for each gate, as the example the note quotes. */
  example: Map<ValidityCheckName, string>;
}

export function tallyValidity(completed: Iterable<StoredFigures | null>, options: CountingOptions = {}): ValidityTally {
  const t: ValidityTally = { total: 0, valid: 0, invalid: 0, unchecked: 0, uncheckedCounted: 0, excluded: 0, failures: {}, example: new Map() };
  for (const figures of completed) {
    t.total++;
    const v = figures?.validity;
    if (!v) {
      t.unchecked++;
      if (figures) t.uncheckedCounted++;
      continue;
    }
    if (v.valid) {
      t.valid++;
      continue;
    }
    t.invalid++;
    if (v.excluded || options.validOnly) t.excluded++;
    v.failed.forEach((gate, i) => {
      t.failures[gate] = (t.failures[gate] ?? 0) + 1;
      if (!t.example.has(gate) && v.reasons[i]) t.example.set(gate, v.reasons[i]!);
    });
  }
  return t;
}

/** The tally of runs whose parts' tallies these are, in order. */
export function addValidityTallies(tallies: Iterable<ValidityTally>): ValidityTally {
  const sum: ValidityTally = { total: 0, valid: 0, invalid: 0, unchecked: 0, uncheckedCounted: 0, excluded: 0, failures: {}, example: new Map() };
  for (const t of tallies) {
    sum.total += t.total;
    sum.valid += t.valid;
    sum.invalid += t.invalid;
    sum.unchecked += t.unchecked;
    sum.uncheckedCounted += t.uncheckedCounted;
    sum.excluded += t.excluded;
    if (t.invalid === 0) continue;
    for (const [gate, n] of Object.entries(t.failures) as [ValidityCheckName, number][]) sum.failures[gate] = (sum.failures[gate] ?? 0) + n;
    for (const [gate, reason] of t.example) if (!sum.example.has(gate)) sum.example.set(gate, reason);
  }
  return sum;
}

/** Whether the runs tallied are publishable, and the note that says why. */
export function validityOfTally(t: ValidityTally, options: CountingOptions = {}): CampaignValidity {
  const { valid, invalid, unchecked, uncheckedCounted, excluded } = t;
  const failures = { ...t.failures };
  const runs = valid + invalid;
  const publishable = runs > 0 && invalid === excluded && uncheckedCounted === 0;
  return { publishable, runs, valid, invalid, unchecked, excluded, failures, note: noteOf({ runs, valid, invalid, excluded, uncheckedCounted, total: t.total, example: t.example, failures, options }) };
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
