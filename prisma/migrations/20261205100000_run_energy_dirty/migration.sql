-- Runs whose telemetry changed since their energy figures were computed (issue 15: a late batch
-- is recomputed by the scheduler, not inside the API request). The telemetry writer upserts a
-- run's row in the transaction that stores its batch, raising `version`; a recompute reads the
-- version before its inputs and deletes the row only if it is unchanged, so a batch that lands
-- meanwhile keeps it. A crash between the batch and its recompute loses nothing: the row stays.
CREATE TABLE "run_energy_dirty" (
    "run_id" UUID NOT NULL,
    "version" BIGINT NOT NULL DEFAULT 1,
    "since" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "run_energy_dirty_pkey" PRIMARY KEY ("run_id")
);

ALTER TABLE "run_energy_dirty" ADD CONSTRAINT "run_energy_dirty_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
