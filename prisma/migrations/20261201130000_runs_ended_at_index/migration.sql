-- Which jobs shared a run's nodes during its window: the runs that ended after the window began
-- (or have not ended), found by this index rather than by reading every run of the cluster.
CREATE INDEX "runs_ended_at_idx" ON "runs"("ended_at");
