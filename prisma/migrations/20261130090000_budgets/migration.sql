-- Budgets for hostile input and careless jobs (issue 10).

-- What erg could not do in full for a run without failing it, in words a researcher can act on:
-- e.g. metrics read from the first 256 MiB of a larger stdout.log, or a metric regex that ran
-- out of its time budget. Empty for almost every run.
ALTER TABLE "runs" ADD COLUMN "warnings" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];

-- Where a project's suites may send webhooks, set by an admin: { "allowHttp": bool, "allowHosts": [host or CIDR, …] }.
-- By default only https to public addresses; internal CI hosts must be allowed here by name or CIDR.
ALTER TABLE "projects" ADD COLUMN "webhook_policy" JSONB NOT NULL DEFAULT '{}';
