-- A run's cooldown (the campaign spec's `cooldown` block, issue 26): how long its job waited for
-- its nodes to be back near idle before the idle baseline and the workload, and each node's record
-- (RunCooldown as JSON); null: the campaign has none, or the job never reached the wait.
ALTER TABLE "runs" ADD COLUMN "cooldown" JSONB;

-- A cooldown compares each node with its latest idle baseline: the cluster's most recent runs with
-- one, found by this index rather than by reading every run of the cluster (listIdleReferences).
CREATE INDEX "runs_idle_end_ns_idx" ON "runs"("idle_end_ns");
