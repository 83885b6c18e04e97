import { countedFiguresOf, resultMemberOf, type ResultMember } from '@erg/db/counted-figures';
import { campaignFiguresOf, type CampaignFigureInputs } from '@erg/results/campaign-figures';
import { runFiguresOf, type StoredRunEnergy } from '@erg/results/run-figures';
import { countUnmeasured, unmeasuredListPath } from '@erg/results/unmeasured';
import { CampaignResults, RunEnergyView } from '@erg/spec';
import { z } from 'zod';
import { BundleFileError, type EvidenceBundle } from './bundle-reader';
import { BUNDLE_FILES, runFile, type Manifest } from './layout';

export { BundleUnreadableError, openEvidenceBundle, type EvidenceBundle } from './bundle-reader';

/**
 * `erg verify`: checks a bundle from itself alone, offline. Every file against the manifest's
 * sha256; every run's figures recomputed with runFiguresOf from its inputs and samples, and
 * compared with its stored figures (energy.json) exactly — deep equality after a JSON round trip,
 * as the figures were stored; the campaign's results recomputed with campaignFiguresOf from the
 * recomputed figures, and compared with results.json the same way. What differs is listed: the
 * file, the run, the path in the JSON, the stored value and the recomputed one.
 */

/** One thing that is not as the bundle says. */
export interface Difference {
  file: string;
  /** The run it is about; null for the campaign's files. */
  run: string | null;
  /** Where in the file (`configurations[0].energyJ.mean`); '' for the file as a whole. */
  path: string;
  stored: unknown;
  recomputed: unknown;
  /** On the line that stands for differences not listed (path '…'): how many. */
  more?: number;
}

export interface VerifyReport {
  manifest: Manifest;
  /** Files whose sha256 and size were checked. */
  files: number;
  /** Runs whose figures were recomputed (those with inputs). */
  runsRecomputed: number;
  /** Whether the campaign's results were recomputed (and compared). */
  resultsRecomputed: boolean;
  differences: Difference[];
}

/** Most differences listed per file (the count of the rest is said). */
export const MAX_DIFFERENCES_PER_FILE = 20;

export function verifyBundle(bundle: EvidenceBundle): VerifyReport {
  const differences: Difference[] = [];
  const files = checkHashes(bundle, differences);
  const figures = new Map<string, StoredRunEnergy | null>();
  let runsRecomputed = 0;
  for (const runId of bundle.manifest.runs) {
    const recomputed = recomputeRun(bundle, runId, differences);
    if (recomputed === 'unreadable') continue;
    if (recomputed.computed) runsRecomputed++;
    figures.set(runId, recomputed.figures);
  }
  const resultsRecomputed = recomputeResults(bundle, figures, differences);
  return { manifest: bundle.manifest, files, runsRecomputed, resultsRecomputed, differences };
}

/** Every file listed is there with its sha256 and size, and nothing is there unlisted. Returns how many were checked. */
function checkHashes(bundle: EvidenceBundle, differences: Difference[]): number {
  const listed = new Set<string>();
  for (const f of bundle.manifest.files) {
    listed.add(f.path);
    const member = bundle.members.get(f.path);
    const run = runOf(f.path);
    if (!member) differences.push({ file: f.path, run, path: '', stored: `in the manifest (sha256 ${f.sha256})`, recomputed: 'missing from the archive' });
    else if (member.sha256 !== f.sha256 || member.bytes !== f.bytes) {
      differences.push({ file: f.path, run, path: 'sha256', stored: `${f.sha256} (${f.bytes} bytes)`, recomputed: `${member.sha256} (${member.bytes} bytes)` });
    }
  }
  for (const [path, member] of bundle.members) {
    if (path !== BUNDLE_FILES.manifest && !listed.has(path)) differences.push({ file: path, run: runOf(path), path: '', stored: 'not in the manifest', recomputed: `sha256 ${member.sha256}` });
  }
  return bundle.manifest.files.length;
}

const runOf = (path: string): string | null => /^runs\/([^/]+)\//.exec(path)?.[1] ?? null;

/** A run's figures recomputed from its inputs, compared with its energy.json; 'unreadable' when its files cannot be used. */
function recomputeRun(bundle: EvidenceBundle, runId: string, differences: Difference[]): { figures: StoredRunEnergy | null; computed: boolean } | 'unreadable' {
  const energyPath = runFile(runId, 'energy');
  try {
    const inputs = bundle.runInputs(runId);
    const stored = bundle.json(energyPath) as Record<string, unknown> | null;
    const figures = inputs === null ? null : roundTrip(runFiguresOf(inputs));
    if (stored === null && figures !== null) differences.push({ file: energyPath, run: runId, path: '', stored: 'no stored figures', recomputed: 'figures' });
    else if (stored !== null && figures === null) {
      differences.push({ file: energyPath, run: runId, path: '', stored: 'figures', recomputed: inputs === null ? `none: no ${runFile(runId, 'inputs')}` : 'none: no sample in its span' });
    } else if (stored !== null && figures !== null) {
      // energy.json is the route's answer: the stored figures with the run's id, when they were
      // computed, whether they are stale and the run's cooldown (its own record, not a figure),
      // encoded by its schema. The recomputed ones go the same way.
      const view = roundTrip(z.encode(RunEnergyView, { ...figures, runId, computedAt: stored.computedAt, stale: stored.stale, cooldown: stored.cooldown } as RunEnergyView));
      differences.push(...limited(energyPath, runId, diffJson(stored, view)));
    }
    return { figures, computed: inputs !== null };
  } catch (err) {
    if (err instanceof z.ZodError) {
      differences.push({ file: energyPath, run: runId, path: '', stored: 'figures the energy route answers', recomputed: `figures its schema refuses: ${err.issues[0]?.message ?? err.message}` });
      return 'unreadable';
    }
    if (!(err instanceof BundleFileError)) throw err;
    differences.push({ file: err.file, run: runId, path: '', stored: 'a file erg wrote', recomputed: err.message.slice(err.file.length + 2) });
    return 'unreadable';
  }
}

/** The campaign's results recomputed from the runs' recomputed figures, compared with results.json; whether they could be. */
function recomputeResults(bundle: EvidenceBundle, figures: ReadonlyMap<string, StoredRunEnergy | null>, differences: Difference[]): boolean {
  const file = BUNDLE_FILES.results;
  try {
    const inputs = bundle.campaignInputs();
    const stored = bundle.json(file);
    if (inputs === null || stored === null) {
      differences.push({ file: inputs === null ? BUNDLE_FILES.campaignInputs : file, run: null, path: '', stored: 'a file erg wrote', recomputed: 'missing' });
      return false;
    }
    const missing = inputs.rows.filter((r) => r.runId !== null && !figures.has(r.runId));
    for (const r of missing) differences.push({ file: BUNDLE_FILES.campaignInputs, run: r.runId, path: '', stored: 'a completed run of the campaign', recomputed: 'its figures cannot be recomputed from the bundle' });
    if (missing.length > 0) return false;
    const campaignId = bundle.manifest.campaignId;
    const figured = { campaignId, ...campaignFiguresOf(campaignInputsWith(inputs, figures)) };
    // As the results route answers: a search's untried candidates counted, not listed (but as listed
    // in bundles written before the route counted them: results.json without `unmeasured`).
    const counted = typeof stored === 'object' && stored !== null && 'unmeasured' in stored;
    const results = counted ? countUnmeasured(figured, inputs.context?.spec.strategy.kind, unmeasuredListPath(campaignId)) : figured;
    // Encoded by its schema.
    const recomputed = roundTrip(z.encode(CampaignResults, results as CampaignResults));
    differences.push(...limited(file, null, diffJson(stored, recomputed)));
    return true;
  } catch (err) {
    if (err instanceof z.ZodError) {
      differences.push({ file, run: null, path: '', stored: 'results the results route answers', recomputed: `results its schema refuses: ${err.issues[0]?.message ?? err.message}` });
      return false;
    }
    if (!(err instanceof BundleFileError)) throw err;
    differences.push({ file: err.file, run: null, path: '', stored: 'a file erg wrote', recomputed: err.message.slice(err.file.length + 2) });
    return false;
  }
}

/**
 * The campaign's inputs with every stored figure replaced by the run's recomputed one: each
 * row's figures that count, and the phase and data-movement rows, as @erg/db reads them from the
 * stored figures (listConfigurationEnergies, listCampaignRunPhases, listCampaignRunDataMovement) —
 * through @erg/db's own projection (counted-figures.ts), which its SQL follows too.
 */
export function campaignInputsWith(inputs: CampaignFigureInputs, figuresOf: ReadonlyMap<string, StoredRunEnergy | null>): CampaignFigureInputs {
  const stored = (runId: string) => (figuresOf.get(runId) ?? null) as Record<string, unknown> | null;
  const rows = inputs.rows.map((r) => (r.runId === null ? r : { ...r, result: countedFiguresOf(stored(r.runId)) }));
  const member = (name: ResultMember) =>
    rows.flatMap((r) => {
      const value = r.runId === null ? undefined : resultMemberOf(stored(r.runId), name);
      return r.runId !== null && value !== undefined ? [{ runId: r.runId, key: r.key, value }] : [];
    });
  return {
    ...inputs,
    rows,
    phaseRows: member('phases').map(({ runId, key, value }) => ({ runId, key, phases: value })),
    movementRows: member('dataMovement').map(({ runId, key, value }) => ({ runId, key, dataMovement: value })),
  };
}

/** `value` as JSON would give it back (the stored figures went through JSON). */
function roundTrip<T>(value: T): T {
  return value === null || value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** Where two JSON values differ: every path whose values are not equal (objects by key, arrays by index). */
export function diffJson(stored: unknown, recomputed: unknown, path = ''): { path: string; stored: unknown; recomputed: unknown }[] {
  if (Object.is(stored, recomputed)) return [];
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object';
  if (Array.isArray(stored) && Array.isArray(recomputed)) {
    const out = [];
    for (let i = 0; i < Math.max(stored.length, recomputed.length); i++) {
      const at = `${path}[${i}]`;
      if (i >= stored.length) out.push({ path: at, stored: undefined, recomputed: recomputed[i] });
      else if (i >= recomputed.length) out.push({ path: at, stored: stored[i], recomputed: undefined });
      else out.push(...diffJson(stored[i], recomputed[i], at));
    }
    return out;
  }
  if (isObject(stored) && isObject(recomputed) && !Array.isArray(stored) && !Array.isArray(recomputed)) {
    const out = [];
    for (const key of new Set([...Object.keys(stored), ...Object.keys(recomputed)])) {
      const at = path === '' ? key : `${path}.${key}`;
      if (!(key in stored)) out.push({ path: at, stored: undefined, recomputed: recomputed[key] });
      else if (!(key in recomputed)) out.push({ path: at, stored: stored[key], recomputed: undefined });
      else out.push(...diffJson(stored[key], recomputed[key], at));
    }
    return out;
  }
  return [{ path, stored, recomputed }];
}

/** A file's differences, at most MAX_DIFFERENCES_PER_FILE, then one saying how many more. */
function limited(file: string, run: string | null, found: { path: string; stored: unknown; recomputed: unknown }[]): Difference[] {
  const shown: Difference[] = found.slice(0, MAX_DIFFERENCES_PER_FILE).map((d) => ({ file, run, ...d }));
  const more = found.length - shown.length;
  if (more > 0) shown.push({ file, run, path: '…', stored: `${more} more differences`, recomputed: 'not listed', more });
  return shown;
}
