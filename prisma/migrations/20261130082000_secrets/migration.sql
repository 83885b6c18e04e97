-- Secrets (issue 6). clusters.private_key and suites.webhook_secret keep their columns: from now
-- on they hold values sealed by the apps (erg1:<key id>:<iv>:<ciphertext>); SQL has no key, so
-- rows written before stay plaintext until `admin.js seal-secrets` seals them.

-- How a cluster's SSH host key is trusted: 'pinned' (the fingerprint is given when the cluster is
-- registered) or 'trust-on-first-use' (the scheduler records the fingerprint of its first
-- successful connection; pinned from then on).
ALTER TABLE "clusters" ADD COLUMN "host_key_policy" TEXT NOT NULL DEFAULT 'pinned';
ALTER TABLE "clusters" ADD CONSTRAINT "clusters_host_key_policy_check" CHECK ("host_key_policy" IN ('pinned', 'trust-on-first-use'));
-- Only a trust-on-first-use cluster not yet reached may lack its fingerprint.
ALTER TABLE "clusters" ALTER COLUMN "host_key_sha256" DROP NOT NULL;
ALTER TABLE "clusters" ADD CONSTRAINT "clusters_host_key_known_check" CHECK ("host_key_sha256" IS NOT NULL OR "host_key_policy" = 'trust-on-first-use');
