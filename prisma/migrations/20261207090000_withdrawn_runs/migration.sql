-- Runs an adaptive campaign's strategy withdrew (pending runs of a configuration decided first,
-- cancelled as not needed) are no failure of the campaign: withdrawn_at marks them, so that the
-- campaign's state can tell them from runs a user cancelled or Slurm ended.
ALTER TABLE "runs" ADD COLUMN "withdrawn_at" TIMESTAMPTZ(3);

-- The runs withdrawn before this column existed, by the one reason withdrawPendingRuns gave them.
UPDATE "runs" SET "withdrawn_at" = "ended_at"
 WHERE "state" = 'cancelled' AND "reason" = 'not needed: its configuration was decided (erg decisions shows why)';
