-- Users, projects and roles. A project owns clusters, campaigns and suites; a user has one role
-- per project (viewer < researcher < maintainer) and may be a global admin. API tokens belong to
-- a user and may be narrowed to some projects and a lower role, and may expire.

CREATE TABLE "users" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    -- `service`: an account for a CI pipeline rather than a person.
    "kind" TEXT NOT NULL DEFAULT 'person',
    "is_admin" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "disabled_at" TIMESTAMPTZ(3),
    CONSTRAINT "users_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "users_kind_check" CHECK ("kind" IN ('person', 'service'))
);
CREATE UNIQUE INDEX "users_name_key" ON "users"("name");

CREATE TABLE "projects" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "max_concurrent_runs" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "projects_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "projects_name_key" ON "projects"("name");

CREATE TABLE "memberships" (
    "user_id" UUID NOT NULL,
    "project_id" UUID NOT NULL,
    "role" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "memberships_pkey" PRIMARY KEY ("user_id", "project_id"),
    CONSTRAINT "memberships_role_check" CHECK ("role" IN ('viewer', 'researcher', 'maintainer'))
);
CREATE INDEX "memberships_project_id_idx" ON "memberships"("project_id");
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Everything that existed before projects belongs to the project `default`; every token that
-- existed belonged to an admin, now the user `admin`.
INSERT INTO "projects" ("id", "name", "description") VALUES (gen_random_uuid(), 'default', 'everything created before projects existed');
INSERT INTO "users" ("id", "name", "is_admin") VALUES (gen_random_uuid(), 'admin', true);

ALTER TABLE "api_tokens"
    ADD COLUMN "user_id" UUID,
    ADD COLUMN "expires_at" TIMESTAMPTZ(3),
    -- empty: every project of the user; else only these.
    ADD COLUMN "project_ids" UUID[] NOT NULL DEFAULT ARRAY[]::UUID[],
    -- null: the user's own roles; else at most this one (and never admin).
    ADD COLUMN "max_role" TEXT,
    ADD CONSTRAINT "api_tokens_max_role_check" CHECK ("max_role" IS NULL OR "max_role" IN ('viewer', 'researcher', 'maintainer'));
UPDATE "api_tokens" SET "user_id" = (SELECT "id" FROM "users" WHERE "name" = 'admin');
ALTER TABLE "api_tokens" ALTER COLUMN "user_id" SET NOT NULL, DROP COLUMN "role";
CREATE INDEX "api_tokens_user_id_idx" ON "api_tokens"("user_id");
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "clusters" ADD COLUMN "project_id" UUID;
ALTER TABLE "campaigns" ADD COLUMN "project_id" UUID, ADD COLUMN "created_by_user_id" UUID;
ALTER TABLE "suites" ADD COLUMN "project_id" UUID;
UPDATE "clusters" SET "project_id" = (SELECT "id" FROM "projects" WHERE "name" = 'default');
UPDATE "campaigns" SET "project_id" = (SELECT "id" FROM "projects" WHERE "name" = 'default');
UPDATE "suites" SET "project_id" = (SELECT "id" FROM "projects" WHERE "name" = 'default');
ALTER TABLE "clusters" ALTER COLUMN "project_id" SET NOT NULL;
ALTER TABLE "campaigns" ALTER COLUMN "project_id" SET NOT NULL;
ALTER TABLE "suites" ALTER COLUMN "project_id" SET NOT NULL;
CREATE INDEX "clusters_project_id_idx" ON "clusters"("project_id");
CREATE INDEX "campaigns_project_id_idx" ON "campaigns"("project_id");
CREATE INDEX "suites_project_id_idx" ON "suites"("project_id");
ALTER TABLE "clusters" ADD CONSTRAINT "clusters_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_created_by_user_id_fkey" FOREIGN KEY ("created_by_user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "suites" ADD CONSTRAINT "suites_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
