-- Issue 27 §1: the results of 100,000 runs in ≤ 200 ms after a change. The results worker keeps
-- each campaign's inputs between reads (packages/results inputs-snapshot.ts) and reads again only
-- the runs that changed since: each change row now names its run. NULL: a row that folds earlier
-- rows into their sum (readResultsStamp), whose runs are no longer known — a reader that had not
-- seen every row folded into it reads the campaign whole.
ALTER TABLE "campaign_results_changes" ADD COLUMN "run_id" UUID;

CREATE OR REPLACE FUNCTION "erg_results_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'runs' THEN
    INSERT INTO "campaign_results_changes" ("campaign_id", "run_id") VALUES (NEW."campaign_id", NEW."id");
  ELSE
    -- run_energy and run_nodes: the run's campaign, whatever the run's state (a run completing in
    -- another transaction at the same time must not leave its figures' change unrecorded).
    INSERT INTO "campaign_results_changes" ("campaign_id", "run_id")
    SELECT r."campaign_id", r."id" FROM "runs" r WHERE r."id" = CASE WHEN TG_OP = 'DELETE' THEN OLD."run_id" ELSE NEW."run_id" END;
  END IF;
  RETURN NULL;
END;
$$;
