-- Issue 30 §3: the latest `erg-agent doctor` report of one of the cluster's nodes, uploaded by
-- whoever manages the cluster (PUT /v1/clusters/{name}/node-report; @erg/spec ClusterNodeReport).
-- A column of its own, not a key of `capabilities`: the scheduler's probe rewrites those every
-- 10 minutes and a NULL there means "not reached yet".
ALTER TABLE "clusters" ADD COLUMN "node_report" JSONB;
