-- Dashboard: who created a campaign, and a notification for every run state change.

-- The API token's name (POST /v1/campaigns) or `suite:<name>` (suite triggers); null for older rows.
ALTER TABLE "campaigns" ADD COLUMN "created_by" TEXT;

-- Every run state change is a row in run_events, whoever writes it (API, scheduler, import), so a
-- trigger there sees them all. One statement-level trigger with a transition table: a 10,000-run
-- campaign is one lookup of its campaign and cluster, not 10,000. Payloads stay far below
-- NOTIFY's 8000-byte limit: ids, states and a cluster name (≤ 63 characters) only.
CREATE FUNCTION "erg_notify_run_events"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  payload text;
BEGIN
  FOR payload IN
    SELECT json_build_object(
             'type', 'run',
             'runId', e.run_id,
             'campaignId', r.campaign_id,
             'cluster', cl.name,
             'from', e."from",
             'to', e."to",
             'at', to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
    FROM new_rows e
    JOIN runs r ON r.id = e.run_id
    JOIN campaigns c ON c.id = r.campaign_id
    LEFT JOIN clusters cl ON cl.id = c.cluster_id
    -- Slurm progress without a state change (a new pending reason) is history, not an event.
    WHERE e."from" IS DISTINCT FROM e."to"
    ORDER BY e.id
  LOOP
    PERFORM pg_notify('erg_events', payload);
  END LOOP;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "run_events_notify"
  AFTER INSERT ON "run_events"
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "erg_notify_run_events"();

-- Live power (GET /v1/queue, power events) reads a run's chunks of the last minute only.
CREATE INDEX "telemetry_chunks_run_id_t_last_idx" ON "telemetry_chunks"("run_id", "t_last");
