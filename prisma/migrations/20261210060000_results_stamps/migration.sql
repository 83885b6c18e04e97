-- Issue 27 §1: the API keeps each campaign's computed results (apps/api/src/results-reader.ts) and
-- must never serve them after anything they were computed from changed. What they are computed
-- from (packages/results readCampaignFigureInputs): the campaign's completed runs (their state,
-- metrics and node list), those runs' stored figures (run_energy) and the nodes they ran on
-- (run_nodes, with their fingerprints), the campaign's spec and design (never changed after
-- creation) and its cluster's name and capabilities.
--
-- Every row of runs, run_energy and run_nodes gets a stamp from one sequence: on insert (the
-- column's default), and on every update of what the results read (the triggers below, BEFORE
-- each row: the stamp is written with the row, no other row is locked). A campaign's results stamp
-- (packages/db/src/results-stamp.ts) is the count and the SUM of those stamps over its rows: an
-- update replaces a stamp with a larger one, an insert adds a row, a delete removes one, so any
-- committed change moves the sum or the count. (The maximum would not do: sequence values are
-- drawn in one order and committed in another, so a change committed late can carry a smaller
-- stamp than the largest already visible.) Rows stored before this migration keep stamp 0 until
-- they change.
CREATE SEQUENCE "results_stamp_seq" AS BIGINT;

-- DEFAULT 0 first, then the sequence for new rows: the tables are not rewritten.
ALTER TABLE "runs" ADD COLUMN "results_stamp" BIGINT NOT NULL DEFAULT 0;
ALTER TABLE "runs" ALTER COLUMN "results_stamp" SET DEFAULT nextval('results_stamp_seq');
ALTER TABLE "run_energy" ADD COLUMN "results_stamp" BIGINT NOT NULL DEFAULT 0;
ALTER TABLE "run_energy" ALTER COLUMN "results_stamp" SET DEFAULT nextval('results_stamp_seq');
ALTER TABLE "run_nodes" ADD COLUMN "results_stamp" BIGINT NOT NULL DEFAULT 0;
ALTER TABLE "run_nodes" ALTER COLUMN "results_stamp" SET DEFAULT nextval('results_stamp_seq');

CREATE FUNCTION "erg_results_restamp"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.results_stamp := nextval('results_stamp_seq');
  RETURN NEW;
END;
$$;

-- A run counts in the results once completed: becoming completed (or ceasing to be), and a change
-- to what the results read of a completed run, restamp it. The scheduler's other transitions
-- (pending → submitting → queued → running) do not, so a live campaign's cached results stay
-- valid until a run completes.
CREATE TRIGGER "runs_results_restamp" BEFORE UPDATE ON "runs" FOR EACH ROW
  WHEN ((OLD.state = 'completed') IS DISTINCT FROM (NEW.state = 'completed')
        OR (NEW.state = 'completed' AND (OLD.metrics IS DISTINCT FROM NEW.metrics OR OLD.node_list IS DISTINCT FROM NEW.node_list
            OR OLD.repetition IS DISTINCT FROM NEW.repetition OR OLD.configuration_id IS DISTINCT FROM NEW.configuration_id
            OR OLD.campaign_id IS DISTINCT FROM NEW.campaign_id)))
  EXECUTE FUNCTION "erg_results_restamp"();

-- Every replacement of a run's figures (storeRunEnergy's upsert) restamps them.
CREATE TRIGGER "run_energy_results_restamp" BEFORE UPDATE ON "run_energy" FOR EACH ROW
  EXECUTE FUNCTION "erg_results_restamp"();

-- A node's fingerprint changing restamps it; its clock readings and batch sequence, which every
-- telemetry push updates, do not (the results do not read them).
CREATE TRIGGER "run_nodes_results_restamp" BEFORE UPDATE ON "run_nodes" FOR EACH ROW
  WHEN (OLD.fingerprint_id IS DISTINCT FROM NEW.fingerprint_id OR OLD.node IS DISTINCT FROM NEW.node OR OLD.run_id IS DISTINCT FROM NEW.run_id)
  EXECUTE FUNCTION "erg_results_restamp"();
