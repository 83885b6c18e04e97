-- Fencing for several scheduler processes (issue 11).

-- Incremented each time a scheduler takes the cluster's lease (a Postgres advisory lock held for
-- one cycle). The newest epoch is also written to a fence file on the cluster, which every remote
-- sbatch loop checks before each sbatch: a loop of an older lease (its scheduler died or lost the
-- lease) submits nothing more.
ALTER TABLE "clusters" ADD COLUMN "submit_epoch" BIGINT NOT NULL DEFAULT 0;

-- The epoch of the lease that claimed the run for submission. Transitions out of `submitting`
-- made by the claiming cycle require it, so a cycle that lost its lease cannot overwrite what a
-- newer lease decided about the run.
ALTER TABLE "runs" ADD COLUMN "submit_epoch" BIGINT;
