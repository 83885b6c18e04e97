-- Issue 27 §1: the API keeps each campaign's computed results (apps/api/src/results-reader.ts) and
-- must never serve them after anything they were computed from changed. What they are computed
-- from (packages/results readCampaignFigureInputs): the campaign's completed runs (their state,
-- metrics and node list), the runs' stored figures (run_energy), the nodes they ran on (run_nodes,
-- with their fingerprints), the campaign's spec and design (never changed after creation) and its
-- cluster's name and capabilities (read whole with the stamp).
--
-- Every change to the first three, whoever writes it (the scheduler, the API, an operator by
-- hand), adds a row here in the same transaction, from the triggers below. A campaign's results
-- stamp (packages/db/src/results-stamp.ts) is the SUM of its rows' `changes`: each change adds 1,
-- so any committed change moves it. (Not the largest id: ids are drawn in one order and committed
-- in another, so a change committed late can carry a smaller id than the largest already visible.)
-- The reader folds a campaign's rows into one holding their sum, so the sum is one index lookup.
-- Inserts only, and no foreign key: a writer takes no lock another writer waits for.
CREATE TABLE "campaign_results_changes" (
  "id" BIGSERIAL NOT NULL,
  "campaign_id" UUID NOT NULL,
  "changes" BIGINT NOT NULL DEFAULT 1,
  CONSTRAINT "campaign_results_changes_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "campaign_results_changes_campaign_id_idx" ON "campaign_results_changes" ("campaign_id");

CREATE FUNCTION "erg_results_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'runs' THEN
    INSERT INTO "campaign_results_changes" ("campaign_id") VALUES (NEW."campaign_id");
  ELSE
    -- run_energy and run_nodes: the run's campaign, whatever the run's state (a run completing in
    -- another transaction at the same time must not leave its figures' change unrecorded).
    INSERT INTO "campaign_results_changes" ("campaign_id")
    SELECT r."campaign_id" FROM "runs" r WHERE r."id" = CASE WHEN TG_OP = 'DELETE' THEN OLD."run_id" ELSE NEW."run_id" END;
  END IF;
  RETURN NULL;
END;
$$;

-- A run counts in the results once completed: becoming completed (or ceasing to be), and a change
-- to what the results read of a completed run. The scheduler's other transitions (pending →
-- submitting → queued → running) add nothing, so a live campaign's kept results stay valid until a
-- run completes.
CREATE TRIGGER "runs_results_changed" AFTER UPDATE ON "runs" FOR EACH ROW
  WHEN ((OLD."state" = 'completed') IS DISTINCT FROM (NEW."state" = 'completed')
        OR (NEW."state" = 'completed' AND (OLD."metrics" IS DISTINCT FROM NEW."metrics" OR OLD."node_list" IS DISTINCT FROM NEW."node_list"
            OR OLD."repetition" IS DISTINCT FROM NEW."repetition" OR OLD."configuration_id" IS DISTINCT FROM NEW."configuration_id")))
  EXECUTE FUNCTION "erg_results_changed"();

-- Every figure stored, replaced or forgotten.
CREATE TRIGGER "run_energy_results_changed" AFTER INSERT OR UPDATE OR DELETE ON "run_energy" FOR EACH ROW
  EXECUTE FUNCTION "erg_results_changed"();

-- A node first seen, and a node's fingerprint changing; not its clock readings and batch
-- sequence, which every telemetry push updates and the results do not read.
CREATE TRIGGER "run_nodes_results_changed" AFTER INSERT OR DELETE ON "run_nodes" FOR EACH ROW
  EXECUTE FUNCTION "erg_results_changed"();
CREATE TRIGGER "run_nodes_fingerprint_results_changed" AFTER UPDATE ON "run_nodes" FOR EACH ROW
  WHEN (OLD."fingerprint_id" IS DISTINCT FROM NEW."fingerprint_id")
  EXECUTE FUNCTION "erg_results_changed"();
