-- The queue (GET /v1/queue, packages/db/src/queue.ts) pages through the unfinished runs in its own
-- order: running first, then queued and submitting, then pending; oldest first. Without this index
-- every request sorted every unfinished run (100,000 of them: 0.1-0.2 s) and counted them in a
-- window over the whole set; with it the page is read in order and stops at its limit, and the
-- per-campaign counts are an index-only scan. Partial: finished runs, most of the table, are not in
-- it. The first column must stay the very expression queue.ts orders by (its RANK).
CREATE INDEX "runs_queue_order_idx" ON "runs" (
  (CASE "state" WHEN 'running' THEN 0 WHEN 'completing' THEN 0 WHEN 'queued' THEN 1 WHEN 'submitting' THEN 1 ELSE 2 END),
  "created_at", "campaign_id", "position"
) WHERE "state" IN ('pending', 'submitting', 'queued', 'running', 'completing');

-- The run-event notifications (20261130070000_dashboard), same payloads, found by index. The
-- trigger fires once per statement; its join of the new events with `runs` was planned as a hash
-- of the whole runs table (a 5,000-event statement against 400,000 runs: 0.65 s), so every batch of
-- run transitions cost a scan of every run ever stored, and storing a 100,000-run campaign in
-- chunks one scan per chunk. Each event's run is now looked up by its primary key, and each
-- campaign once.
CREATE OR REPLACE FUNCTION "erg_notify_run_events"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  payload text;
BEGIN
  FOR payload IN
    WITH ev AS MATERIALIZED (
      SELECT e.id, e.run_id, e."from", e."to", e.at,
             -- A scalar subquery is never turned into a join: one index lookup per event.
             (SELECT r.campaign_id FROM runs r WHERE r.id = e.run_id) AS campaign_id
      FROM new_rows e
      -- Slurm progress without a state change (a new pending reason) is history, not an event.
      WHERE e."from" IS DISTINCT FROM e."to"
    ), camp AS MATERIALIZED (
      SELECT c.id, cl.name AS cluster
      FROM campaigns c LEFT JOIN clusters cl ON cl.id = c.cluster_id
      WHERE c.id IN (SELECT DISTINCT campaign_id FROM ev)
    )
    SELECT json_build_object(
             'type', 'run',
             'runId', ev.run_id,
             'campaignId', ev.campaign_id,
             'cluster', camp.cluster,
             'from', ev."from",
             'to', ev."to",
             'at', to_char(ev.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
    FROM ev JOIN camp ON camp.id = ev.campaign_id
    ORDER BY ev.id
  LOOP
    PERFORM pg_notify('erg_events', payload);
  END LOOP;
  RETURN NULL;
END;
$$;
