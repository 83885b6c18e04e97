-- Abuse limits and audit: a per-cluster cap on active runs (the scheduler's claim enforces it,
-- with projects.max_concurrent_runs), and an append-only log of every mutating API request.

-- Most runs in submitting/queued/running/completing at once on this cluster; null: no limit.
ALTER TABLE "clusters" ADD COLUMN "max_concurrent_runs" INTEGER;
ALTER TABLE "clusters" ADD CONSTRAINT "clusters_max_concurrent_runs_check" CHECK ("max_concurrent_runs" IS NULL OR "max_concurrent_runs" >= 0);

-- One row per mutating /v1 request (telemetry ingest excepted), refused ones included.
-- No foreign keys on purpose: history must outlive (and not be rewritten by) deleted tokens,
-- projects or resources.
CREATE TABLE "audit_log" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor_token_id" UUID,
    "actor_name" TEXT,
    "action" TEXT NOT NULL,
    "resource_type" TEXT,
    "resource_id" TEXT,
    "project_id" UUID,
    "status_code" INTEGER NOT NULL,
    "ip" TEXT,
    "user_agent" TEXT,
    "request_id" TEXT,
    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);
-- GET /v1/audit pages newest first by id; these serve its filters.
CREATE INDEX "audit_log_at_idx" ON "audit_log"("at");
CREATE INDEX "audit_log_actor_token_id_id_idx" ON "audit_log"("actor_token_id", "id");
CREATE INDEX "audit_log_action_id_idx" ON "audit_log"("action", "id");
CREATE INDEX "audit_log_resource_type_resource_id_id_idx" ON "audit_log"("resource_type", "resource_id", "id");
CREATE INDEX "audit_log_project_id_id_idx" ON "audit_log"("project_id", "id");
