// A campaign's results as GET /v1/campaigns/:id/results returns them, for the unit tests.
import type { CampaignResults, ConfigurationResult, Summary } from '@erg/web';

export function summary(mean: number | null, half = 0, n = 3): Summary {
  return { n, mean, std: mean === null ? null : half, ci95: mean === null ? null : [mean - half, mean + half], cv: null, min: mean, max: mean };
}

export function config(key: string, parameters: Record<string, unknown>, timeS: number | null, energyJ: number | null, extra: Partial<ConfigurationResult> = {}): ConfigurationResult {
  return {
    key, parameters, n: timeS === null ? 0 : 3,
    timeS: summary(timeS, 0.5), energyJ: summary(energyJ, 20), edpJs: summary(timeS !== null && energyJ !== null ? timeS * energyJ : null, 1),
    ed2pJs2: summary(null), avgPowerW: summary(timeS !== null && energyJ !== null ? energyJ / timeS : null, 2), metrics: {},
    components: energyJ === null ? {} : { cpu: summary(energyJ * 0.75), memory: summary(energyJ * 0.25) },
    point: timeS === null || energyJ === null ? null : { timeS, energyJ, n: 3 },
    paretoOptimal: false,
    flaggedRuns: {},
    ...extra,
  };
}

/** Four configurations: a (fast, costly), b (slow, frugal), c (dominated by a), d (not measured). */
export function results(): CampaignResults {
  return {
    campaignId: '00000000-0000-4000-8000-000000000001',
    configurations: [
      config('n=1;w=1', { n: 1, w: 1 }, 10, 500, { paretoOptimal: true }),
      config('n=1;w=2', { n: 1, w: 2 }, 20, 300, { paretoOptimal: true }),
      config('n=2;w=1', { n: 2, w: 1 }, 12, 600),
      config('n=2;w=2', { n: 2, w: 2 }, null, null),
    ],
    paretoFront: ['n=1;w=1', 'n=1;w=2'],
    best: { time: 'n=1;w=1', energy: 'n=1;w=2', edp: 'n=1;w=1' },
    tradeoff: { fastest: 'n=1;w=1', mostFrugal: 'n=1;w=2', energySavedJ: 200, energySavedPct: 40, timeLostS: 10, timeLostPct: 100 },
    excluded: [{ key: 'n=2;w=2', why: 'no completed run' }],
  };
}
