-- Issue 15 §2: every sensor says over what interval its readings average and how often a counter
-- changes, as its agent declared them in a batch's `sensors` (@erg/spec SensorInfo averagingMs,
-- updateMs). Nullable: older agents, and sources that do not know, leave them out. Their bounds
-- (0 < x <= 3,600,000 ms) are checked where every batch is decoded (SensorDescription), not here:
-- one bad row would fail the whole group of batches the writer stores in one transaction.
ALTER TABLE "telemetry_sensors" ADD COLUMN "averaging_ms" DOUBLE PRECISION,
ADD COLUMN "update_ms" DOUBLE PRECISION;
