import { DEFAULT_CONFIDENCE, runOrderNote, type CampaignDesignView, type CampaignRunOrder, type CampaignSpec } from '@erg/spec';

/**
 * The results' `design` member: the run order the runs followed and its seed (the campaign's
 * design columns — a campaign created before run orders existed says configuration-major, whatever
 * its stored spec now defaults to), the nodes they were balanced over, and the confidence of the
 * claims (the spec's design).
 */
export function campaignDesignView(context: { spec: CampaignSpec; design: CampaignRunOrder } | null): CampaignDesignView {
  // The results are only asked of a campaign that exists; without one there is no order to state.
  const design = context?.design ?? { order: 'configuration-major' as const, seed: null };
  return {
    order: design.order,
    seed: design.seed,
    confidence: context?.spec.design.confidence ?? DEFAULT_CONFIDENCE,
    nodes: context?.spec.design.nodes ?? null,
    note: runOrderNote(design),
  };
}
