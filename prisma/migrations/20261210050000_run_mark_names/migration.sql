-- Issue 27 §1: a run's distinct phase names are capped (ERG_MAX_PHASE_NAMES). Each name a run's
-- marks were stored under has a row here, inserted in the transaction that stores them; a writer
-- that would add a name holds the run's advisory lock while it counts and inserts, so concurrent
-- batches of one run never pass the cap between them. Marks of a name that did not fit are not
-- stored (the run's warnings say so). Existing runs keep every name they have.
CREATE TABLE "run_mark_names" (
    "run_id" UUID NOT NULL,
    "name" TEXT NOT NULL,

    CONSTRAINT "run_mark_names_pkey" PRIMARY KEY ("run_id","name")
);

ALTER TABLE "run_mark_names" ADD CONSTRAINT "run_mark_names_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

INSERT INTO "run_mark_names" ("run_id", "name") SELECT DISTINCT "run_id", "name" FROM "run_marks";
