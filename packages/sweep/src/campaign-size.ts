import { ROOT_PATH, type CampaignSpec, type SpecIssue } from '@erg/spec';
import { axesOf, axisLabel, combinationCount, type Axis } from './axes';
import { countConfigurations } from './expand';

/**
 * The most combinations (before excludes) erg will enumerate. Checked on the raw product first, so
 * a typo that makes a 10^12-point grid is refused in microseconds rather than exhausting memory.
 */
export const EXPANSION_LIMIT = 1_000_000;

export interface SizeLimits {
  /** Most runs (configurations × repetitions) one campaign may have. */
  maxRuns: number;
}

function formatCount(n: number): string {
  if (!Number.isFinite(n) || n > Number.MAX_SAFE_INTEGER) return `about ${n.toExponential(1)}`;
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function largestAxes(axes: readonly Axis[]): string {
  return [...axes]
    .sort((x, y) => y.tuples.length - x.tuples.length)
    .slice(0, 3)
    .map((axis) => `${axisLabel(axis)}: ${axis.tuples.length}`)
    .join(', ');
}

/**
 * Refuses a campaign with more than `maxRuns` runs. Nothing is expanded: the raw product decides
 * when excludes cannot matter, and otherwise only the axes excludes touch are enumerated.
 */
export function checkCampaignSize(
  spec: Pick<CampaignSpec, 'parameters' | 'zip' | 'exclude' | 'repetitions'>,
  limits: SizeLimits,
): SpecIssue[] {
  const axes = axesOf(spec);
  const raw = combinationCount(axes);
  if (raw * spec.repetitions <= limits.maxRuns) return [];
  const shrink = `remove parameter values (largest axes: ${largestAxes(axes)}), add excludes or lower repetitions`;
  if (raw > EXPANSION_LIMIT) {
    return [
      {
        path: ROOT_PATH,
        code: 'campaign_too_large',
        message: `the parameter space has ${formatCount(raw)} combinations before excludes, more than erg expands (${formatCount(EXPANSION_LIMIT)}), and the limit is ${formatCount(limits.maxRuns)} runs; ${shrink}`,
      },
    ];
  }
  const count = countConfigurations(spec);
  const runs = count * spec.repetitions;
  if (runs <= limits.maxRuns) return [];
  return [
    {
      path: ROOT_PATH,
      code: 'campaign_too_large',
      message: `the campaign has ${formatCount(runs)} runs (${formatCount(count)} configurations × ${spec.repetitions} repetitions), more than the limit of ${formatCount(limits.maxRuns)}; ${shrink}`,
    },
  ];
}
