-- Job arrays (issue 14): the array submission and task index a run was staged into, written before
-- sbatch, so that a scheduler killed after sbatch finds the array by its name and maps each task
-- back to its run; and a per-run cancel (one task of an array, or one job).
ALTER TABLE "runs" ADD COLUMN "array_submission" UUID;
ALTER TABLE "runs" ADD COLUMN "array_index" INTEGER;
ALTER TABLE "runs" ADD COLUMN "cancel_requested_at" TIMESTAMPTZ(3);
