-- How many telemetry batches the run had when its stored figures were computed: two recomputes of
-- one run that overlap (two late batches, the spool pull beside a late push) must not let the one
-- that read fewer batches store last. A store only replaces figures computed from as many or fewer.
ALTER TABLE "run_energy" ADD COLUMN "batches_seen" INTEGER NOT NULL DEFAULT 0;
