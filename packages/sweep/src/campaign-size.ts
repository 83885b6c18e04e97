import { maxRunsOf, ROOT_PATH, type CampaignSpec, type SpecIssue } from '@erg/spec';
import { axisLabel, type Axis } from './axes';
import { SpaceIndex, SpaceTooComplexError } from './space-index';

export interface SizeLimits {
  /** Most runs (configurations × repetitions) one campaign may have. */
  maxRuns: number;
  /** Most steps counting the configurations may take (default SPACE_WORK_BUDGET). */
  maxCountSteps?: number;
}

function formatCount(n: number): string {
  if (!Number.isFinite(n)) return 'more than 10^308';
  if (n > Number.MAX_SAFE_INTEGER) return `about ${n.toExponential(1)}`;
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function largestAxes(axes: readonly Axis[]): string {
  return [...axes]
    .sort((x, y) => y.tuples.length - x.tuples.length)
    .slice(0, 3)
    .map((axis) => `${axisLabel(axis)}: ${axis.tuples.length}`)
    .join(', ');
}

export type CampaignSizeResult = { ok: true; configurations: number } | { ok: false; issues: SpecIssue[] };

/**
 * Counts a campaign's configurations without building them (SpaceIndex) and refuses more than
 * `maxRuns` runs, or excludes too tangled to count within the step budget. `index` lets the
 * caller expand afterwards with the work already done.
 */
export function measureCampaign(
  spec: Pick<CampaignSpec, 'parameters' | 'zip' | 'exclude' | 'repetitions'> & Partial<Pick<CampaignSpec, 'strategy'>>,
  limits: SizeLimits,
  index: SpaceIndex = new SpaceIndex(spec, limits.maxCountSteps),
): CampaignSizeResult {
  let count: number;
  try {
    count = index.count();
  } catch (err) {
    if (!(err instanceof SpaceTooComplexError)) throw err;
    return {
      ok: false,
      issues: [
        {
          path: 'exclude',
          code: 'exclude_too_complex',
          message: `${err.message}; use fewer exclude entries, or entries that name fewer parameters (an entry may list several values of one parameter)`,
        },
      ],
    };
  }
  // An adaptive campaign is limited by the most it may run (its maximum repetitions, or its budget).
  const strategy = spec.strategy ?? { kind: 'grid' as const };
  const runs = maxRunsOf(strategy, count, spec.repetitions);
  if (runs <= limits.maxRuns) return { ok: true, configurations: count };
  const axes = `remove parameter values (largest axes: ${largestAxes(index.axes)}), add excludes`;
  if (strategy.kind === 'search') {
    // A search stores every configuration of its space (the candidates) and runs its budget.
    const what = count >= strategy.budget.maxRuns ? `${formatCount(count)} configurations to search` : `a budget of ${formatCount(strategy.budget.maxRuns)} runs`;
    return { ok: false, issues: [{ path: ROOT_PATH, code: 'campaign_too_large', message: `the search has ${what}, more than the limit of ${formatCount(limits.maxRuns)}; ${axes} or lower strategy.budget.maxRuns` }] };
  }
  const adaptive = strategy.kind === 'adaptive';
  const shrink = `${axes} or lower ${adaptive ? 'strategy.maxRepetitions (or set strategy.budget.maxRuns)' : 'repetitions'}`;
  const times = adaptive ? `up to ${strategy.maxRepetitions} repetitions each` : `${spec.repetitions} repetitions`;
  return {
    ok: false,
    issues: [
      {
        path: ROOT_PATH,
        code: 'campaign_too_large',
        message: `the campaign has ${adaptive ? 'up to ' : ''}${formatCount(runs)} runs (${formatCount(count)} configurations × ${times}), more than the limit of ${formatCount(limits.maxRuns)}; ${shrink}`,
      },
    ],
  };
}

/** The issues of measureCampaign alone: none when the campaign is within the limits. */
export function checkCampaignSize(spec: Pick<CampaignSpec, 'parameters' | 'zip' | 'exclude' | 'repetitions'> & Partial<Pick<CampaignSpec, 'strategy'>>, limits: SizeLimits): SpecIssue[] {
  const result = measureCampaign(spec, limits);
  return result.ok ? [] : result.issues;
}
