-- Issue 15 §1: the phase marks a run's workload writes to <node>.marks, as its agents send them
-- with their telemetry batches. (run_id, node, offset) is a mark's identity — offset: the byte
-- offset of its line in that file — so ingest keeps the first copy of a mark sent again (a
-- resent batch, a restarted agent re-reading the file from its start).
CREATE TABLE "run_marks" (
    "run_id" UUID NOT NULL,
    "node" TEXT NOT NULL,
    "offset" BIGINT NOT NULL,
    "kind" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "t" DOUBLE PRECISION NOT NULL,
    "clock" TEXT NOT NULL,
    "writer" TEXT NOT NULL,

    CONSTRAINT "run_marks_pkey" PRIMARY KEY ("run_id","node","offset"),
    CONSTRAINT "run_marks_offset_check" CHECK ("offset" >= 0),
    CONSTRAINT "run_marks_kind_check" CHECK ("kind" IN ('begin', 'end', 'step')),
    CONSTRAINT "run_marks_clock_check" CHECK ("clock" IN ('mono', 'wall'))
);

ALTER TABLE "run_marks" ADD CONSTRAINT "run_marks_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
