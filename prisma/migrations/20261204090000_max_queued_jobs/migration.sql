-- A cluster's own cap on the Slurm jobs erg keeps in its queue (issue 14 §3): runs submitting,
-- queued or running, every array task counted, so that erg stays under a site's MaxSubmitJobs.
ALTER TABLE "clusters" ADD COLUMN "max_queued_jobs" INTEGER;
