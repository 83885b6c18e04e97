-- Suites: campaign templates run on demand or on a cron schedule, judged against a baseline.

-- CreateTable
CREATE TABLE "suites" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "template" JSONB NOT NULL,
    "template_text" TEXT,
    "cron" TEXT,
    "timezone" TEXT NOT NULL DEFAULT 'UTC',
    "baseline_policy" TEXT NOT NULL DEFAULT 'last-passing',
    "baseline_campaign_id" UUID,
    "policy" JSONB NOT NULL,
    "webhook_url" TEXT,
    "webhook_secret" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "suites_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "suites_baseline_policy_check" CHECK ("baseline_policy" IN ('last-passing', 'pinned')),
    CONSTRAINT "suites_pinned_has_campaign" CHECK ("baseline_policy" <> 'pinned' OR "baseline_campaign_id" IS NOT NULL)
);

-- CreateTable
CREATE TABLE "suite_runs" (
    "id" UUID NOT NULL,
    "suite_id" UUID NOT NULL,
    "campaign_id" UUID NOT NULL,
    "trigger" TEXT NOT NULL,
    "trigger_key" TEXT,
    "baseline_campaign_id" UUID,
    "status" TEXT NOT NULL DEFAULT 'running',
    "reasons" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "verdict" JSONB,
    "finished_at" TIMESTAMPTZ(3),
    "webhook_status" TEXT,
    "webhook_attempts" INTEGER NOT NULL DEFAULT 0,
    "webhook_error" TEXT,
    "webhook_delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "suite_runs_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "suite_runs_trigger_check" CHECK ("trigger" IN ('manual', 'schedule')),
    CONSTRAINT "suite_runs_status_check" CHECK ("status" IN ('running', 'pass', 'regressed', 'improved', 'inconclusive')),
    CONSTRAINT "suite_runs_webhook_status_check" CHECK ("webhook_status" IS NULL OR "webhook_status" IN ('pending', 'delivered', 'failed'))
);

-- CreateIndex
CREATE UNIQUE INDEX "suites_name_key" ON "suites"("name");
CREATE UNIQUE INDEX "suite_runs_campaign_id_key" ON "suite_runs"("campaign_id");
CREATE UNIQUE INDEX "suite_runs_trigger_key_key" ON "suite_runs"("trigger_key");
CREATE INDEX "suite_runs_suite_id_created_at_idx" ON "suite_runs"("suite_id", "created_at");
CREATE INDEX "suite_runs_status_idx" ON "suite_runs"("status");

-- AddForeignKey
ALTER TABLE "suites" ADD CONSTRAINT "suites_baseline_campaign_id_fkey" FOREIGN KEY ("baseline_campaign_id") REFERENCES "campaigns"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "suite_runs" ADD CONSTRAINT "suite_runs_suite_id_fkey" FOREIGN KEY ("suite_id") REFERENCES "suites"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "suite_runs" ADD CONSTRAINT "suite_runs_campaign_id_fkey" FOREIGN KEY ("campaign_id") REFERENCES "campaigns"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "suite_runs" ADD CONSTRAINT "suite_runs_baseline_campaign_id_fkey" FOREIGN KEY ("baseline_campaign_id") REFERENCES "campaigns"("id") ON DELETE SET NULL ON UPDATE CASCADE;
