-- Issue 14 §4: jump hosts in front of a login node, OpenSSH user certificates, and rotating both
-- without downtime.

-- The cluster's OpenSSH user certificate (the one line of its -cert.pub), beside the private key it
-- certifies. Public, so stored as given: the API shows its validity without opening any secret.
ALTER TABLE "clusters" ADD COLUMN "certificate" TEXT;

-- The jump hosts (bastions) erg passes to reach the login node, first hop first:
-- [{ "host", "port", "user", "privateKey" (sealed, context cluster:<id>:jump_host:<i>:private_key;
--    null: the cluster's key and certificate), "certificate" (null: none), "hostKeySha256" }].
ALTER TABLE "clusters" ADD COLUMN "jump_hosts" JSONB NOT NULL DEFAULT '[]';

-- Bumped by every change of the key, certificate or jump hosts: connection pools swap to the new
-- credentials when it moves, letting sessions in flight finish.
ALTER TABLE "clusters" ADD COLUMN "credentials_version" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "clusters" ADD COLUMN "credentials_updated_at" TIMESTAMPTZ(3);
