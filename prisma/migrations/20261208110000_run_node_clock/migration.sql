-- Issue 26 §3: each node agent's clock against erg's server. Every push carries the agent's clock
-- when it sent the request (x-erg-sent-at); sentAt − receivedAt is the agent's offset less the
-- request's one-way latency, so the largest over a run's pushes is the tightest lower bound of the
-- offset (it lies within the smallest latency above it). clock_offset_ms keeps that largest value,
-- clock_readings how many pushes it is taken over; null and 0: no push carried a clock (telemetry
-- pulled from the spool, an older agent). A node whose first push carries no provenance gets its
-- row here with seq -1: no batch has brought its fingerprint or power record yet, and the first
-- that does (seq >= 0) replaces nothing it should not.
ALTER TABLE "run_nodes" ADD COLUMN "clock_offset_ms" DOUBLE PRECISION,
ADD COLUMN "clock_readings" INTEGER NOT NULL DEFAULT 0;
