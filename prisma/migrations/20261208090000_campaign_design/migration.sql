-- A campaign's run order (issue 26): the order its runs were placed in (runs.position) and the
-- seed of a randomized order, beside the stored spec so that lists and the scheduler's strategy
-- steps read them without parsing specs. The spec holds them too (design.order, design.seed).
-- Campaigns created before this migration had their runs placed configuration-major, without a
-- seed: that is what they get, whatever their stored spec's design defaults to now.
ALTER TABLE "campaigns"
  ADD COLUMN "design_order" TEXT NOT NULL DEFAULT 'configuration-major',
  ADD COLUMN "design_seed" INTEGER,
  ADD CONSTRAINT "campaigns_design_order_check" CHECK ("design_order" IN ('randomized-blocks', 'blocks', 'configuration-major')),
  ADD CONSTRAINT "campaigns_design_seed_check" CHECK (("design_order" = 'randomized-blocks') = ("design_seed" IS NOT NULL) AND ("design_seed" IS NULL OR "design_seed" >= 0));

-- New campaigns always say their order: createCampaign writes it.
ALTER TABLE "campaigns" ALTER COLUMN "design_order" DROP DEFAULT;
