-- Which internal hosts a project's clusters may be, set by an admin: { "allowHosts": [host, *.suffix, address or CIDR, …] }.
-- By default only public addresses: the scheduler and the API resolve a cluster's login node (or
-- its first jump host) at every connection and refuse loopback, private, link-local, … addresses
-- unless they are allowed here (docs/security.md, "Clusters and jump hosts: address policy").
ALTER TABLE "projects" ADD COLUMN "cluster_policy" JSONB NOT NULL DEFAULT '{}';

-- Clusters registered before the policy existed keep working: each project's policy starts out
-- allowing the hosts its clusters are reached at first (the login node, or the first jump host)
-- as they were written, at most 64 of them (the policy's limit). Admins review and narrow them
-- with GET / PUT /v1/projects/{name}/cluster-policy. Hosts the policy's grammar would not take are
-- left out (the API never stored such hosts).
UPDATE "projects" p
SET "cluster_policy" = jsonb_build_object('allowHosts', to_jsonb((h.hosts)[1:64]))
FROM (
  SELECT c."project_id", array_agg(DISTINCT lower(c.first_hop) ORDER BY lower(c.first_hop)) AS hosts
  FROM (
    SELECT "project_id",
           CASE WHEN jsonb_array_length("jump_hosts") > 0 THEN "jump_hosts" -> 0 ->> 'host' ELSE "host" END AS first_hop
    FROM "clusters"
  ) c
  WHERE c.first_hop ~ '^[A-Za-z0-9.:_-]{1,253}$'
  GROUP BY c."project_id"
) h
WHERE h."project_id" = p."id";
