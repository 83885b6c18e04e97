import { z } from 'zod';

/**
 * The order a campaign's runs go to the cluster in (issue 26; design.ts's glossary, @erg/sweep's
 * run-order.ts computes it): the names, and the order as a campaign shows it.
 */

export const RUN_ORDERS = ['randomized-blocks', 'blocks', 'configuration-major'] as const;
export const RunOrder = z.enum(RUN_ORDERS);
export type RunOrder = z.infer<typeof RunOrder>;

/** Largest seed: a 31-bit non-negative integer, as search's strategy.seed. */
export const MAX_DESIGN_SEED = 2 ** 31 - 1;

/** The run order a campaign's runs follow, as the campaign shows it (GET /v1/campaigns/:id, lists). */
export const CampaignRunOrder = z
  .object({
    order: RunOrder,
    seed: z.int().min(0).max(MAX_DESIGN_SEED).nullable().describe('the seed of the randomized order (given in the spec, or drawn when the campaign was created); null for orders without one'),
  })
  .meta({ id: 'CampaignRunOrder' });
export type CampaignRunOrder = z.infer<typeof CampaignRunOrder>;

/** The run order in a sentence, for the results' design note. */
export function runOrderNote(design: CampaignRunOrder): string {
  switch (design.order) {
    case 'randomized-blocks':
      return `randomized complete blocks (seed ${design.seed ?? 'unknown'}): repetition r of every configuration forms block r, blocks in turn, each block in its own random order`;
    case 'blocks':
      return 'complete blocks in listed order: repetition r of every configuration forms block r, blocks in turn, each block in the listed order of the configurations';
    case 'configuration-major':
      return 'configuration-major: every repetition of a configuration, then the next; drift while the campaign ran shows as a difference between configurations';
  }
}
