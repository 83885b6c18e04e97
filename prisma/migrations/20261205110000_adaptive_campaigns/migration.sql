-- Adaptive campaigns (issue 16): the runs of a campaign are added as results land.
-- strategy_open: the strategy may still add runs (an adaptive campaign from its creation until it
-- stops); while it is, the campaign is not finished even when every run so far is.
-- strategy_stop: why it stopped (everything decided, the budget, a cancel).
ALTER TABLE "campaigns" ADD COLUMN "strategy_open" BOOLEAN NOT NULL DEFAULT false, ADD COLUMN "strategy_stop" TEXT;

-- A repetition of a configuration exists once: the strategy's inserts cannot duplicate a run.
CREATE UNIQUE INDEX "runs_configuration_id_repetition_key" ON "runs"("configuration_id", "repetition");

-- Each configuration's decision, as @erg/strategy's plan made it: `sampling` is updated as runs
-- land, every other status is final (the reason says what was decided on, with which p).
CREATE TABLE "campaign_decisions" (
    "configuration_id" UUID NOT NULL,
    "campaign_id" UUID NOT NULL,
    "status" TEXT NOT NULL,
    "n" INTEGER NOT NULL,
    "reason" TEXT NOT NULL,
    "by_key" TEXT,
    "p" DOUBLE PRECISION,
    "half_width_first" DOUBLE PRECISION,
    "half_width_second" DOUBLE PRECISION,
    "decided_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "runs_used" INTEGER NOT NULL,

    CONSTRAINT "campaign_decisions_pkey" PRIMARY KEY ("configuration_id")
);
CREATE INDEX "campaign_decisions_campaign_id_idx" ON "campaign_decisions"("campaign_id");
ALTER TABLE "campaign_decisions" ADD CONSTRAINT "campaign_decisions_configuration_id_fkey" FOREIGN KEY ("configuration_id") REFERENCES "configurations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "campaign_decisions" ADD CONSTRAINT "campaign_decisions_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE CASCADE ON UPDATE CASCADE;
