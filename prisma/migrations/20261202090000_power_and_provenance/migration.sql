-- Issue 13 §3/§4: the power state a campaign asks for, and what exactly was measured.

-- Where the site installed erg's node helper, and what the scheduler found out about the cluster
-- when it reached it (Slurm version, whether the helper answers and which knobs it allows).
ALTER TABLE "clusters" ADD COLUMN "power_helper" TEXT NOT NULL DEFAULT '/usr/local/sbin/erg-power-helper';
ALTER TABLE "clusters" ADD COLUMN "capabilities" JSONB;

-- Slurm's own energy figure for the run's job (sacct ConsumedEnergyRaw); NULL: Slurm accounts none.
ALTER TABLE "runs" ADD COLUMN "slurm_energy_j" DOUBLE PRECISION;

-- One row per distinct node fingerprint: runs on the same node with the same software share it.
-- id: sha256 of the fingerprint's canonical JSON; class_id: sha256 of its class (no node identity).
CREATE TABLE "node_fingerprints" (
    "id" TEXT NOT NULL,
    "class_id" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "node_fingerprints_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "node_fingerprints_class_id_idx" ON "node_fingerprints"("class_id");

-- The nodes a run's agents reported from: their fingerprint and the power state the helper set;
-- seq: the batch they came with (a later agent process's batch replaces them, an older one never).
CREATE TABLE "run_nodes" (
    "run_id" UUID NOT NULL,
    "node" TEXT NOT NULL,
    "fingerprint_id" TEXT,
    "power" JSONB,
    "seq" INTEGER NOT NULL,
    CONSTRAINT "run_nodes_pkey" PRIMARY KEY ("run_id", "node")
);
CREATE INDEX "run_nodes_fingerprint_id_idx" ON "run_nodes"("fingerprint_id");
ALTER TABLE "run_nodes" ADD CONSTRAINT "run_nodes_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "run_nodes" ADD CONSTRAINT "run_nodes_fingerprint_id_fkey" FOREIGN KEY ("fingerprint_id") REFERENCES "node_fingerprints"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
