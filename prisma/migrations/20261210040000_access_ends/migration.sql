-- Access that ends, ends (issue 27).
--
-- Users, projects and clusters are retired by deactivation, never deleted: their campaigns, runs
-- and audit rows keep naming them. users.disabled_at (never set by any route until now) becomes
-- deactivated_at, the word the API uses for all three.
ALTER TABLE "users" RENAME COLUMN "disabled_at" TO "deactivated_at";
ALTER TABLE "projects" ADD COLUMN "deactivated_at" TIMESTAMPTZ(3);
ALTER TABLE "clusters" ADD COLUMN "deactivated_at" TIMESTAMPTZ(3);

-- Who started a campaign, each part on its own: the user (created_by_user_id, as before), the
-- token (created_by_token_id; its name at creation stays in created_by) and the suite
-- (created_by_suite). created_by held `suite:<name>` for a suite's campaigns, which a token of
-- that name could also write: a suite's campaigns are told by their suite run instead.
ALTER TABLE "campaigns" ADD COLUMN "created_by_token_id" UUID, ADD COLUMN "created_by_suite" TEXT;
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_created_by_token_id_fkey"
    FOREIGN KEY ("created_by_token_id") REFERENCES "api_tokens"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- A suite's campaigns: linked by their suite run.
UPDATE "campaigns" c SET "created_by_suite" = s."name", "created_by" = NULL
FROM "suite_runs" sr JOIN "suites" s ON s."id" = sr."suite_id"
WHERE sr."campaign_id" = c."id";
-- A suite's campaigns whose suite was deleted since (its suite runs went with it): `suite:` with
-- no user, and no token of that name existed when the campaign was created.
UPDATE "campaigns" c SET "created_by_suite" = substr(c."created_by", 7), "created_by" = NULL
WHERE c."created_by_suite" IS NULL AND c."created_by" LIKE 'suite:%' AND c."created_by_user_id" IS NULL
  AND NOT EXISTS (SELECT 1 FROM "api_tokens" t WHERE t."name" = c."created_by" AND t."created_at" <= c."created_at");

-- The token of every other campaign, from its name: the newest token of that name (of the
-- campaign's user, when known) created before the campaign. The user is filled in only where it
-- was unknown and every such token belonged to one user: owning a campaign lets a researcher
-- cancel it, so a guess between users is not made.
WITH candidates AS (
    SELECT c."id" AS campaign_id, t."id" AS token_id, t."user_id",
           row_number() OVER (PARTITION BY c."id" ORDER BY t."created_at" DESC, t."id") AS newest,
           min(t."user_id"::text) OVER (PARTITION BY c."id") = max(t."user_id"::text) OVER (PARTITION BY c."id") AS one_user
    FROM "campaigns" c
    JOIN "api_tokens" t ON t."name" = c."created_by" AND t."created_at" <= c."created_at"
         AND (c."created_by_user_id" IS NULL OR t."user_id" = c."created_by_user_id")
    WHERE c."created_by" IS NOT NULL AND c."created_by_suite" IS NULL
)
UPDATE "campaigns" c
SET "created_by_token_id" = m.token_id,
    "created_by_user_id" = COALESCE(c."created_by_user_id", CASE WHEN m.one_user THEN m."user_id" END)
FROM candidates m
WHERE m.campaign_id = c."id" AND m.newest = 1;
