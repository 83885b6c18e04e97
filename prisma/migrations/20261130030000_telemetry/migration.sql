-- AlterTable
ALTER TABLE "clusters" ADD COLUMN "agent_command" TEXT NOT NULL DEFAULT 'node',
ADD COLUMN "agent_api_url" TEXT,
ADD COLUMN "model_idle_w" DOUBLE PRECISION NOT NULL DEFAULT 60,
ADD COLUMN "model_max_w" DOUBLE PRECISION NOT NULL DEFAULT 250;

-- AlterTable
ALTER TABLE "campaigns" ADD COLUMN "execution" TEXT NOT NULL DEFAULT 'slurm';

-- AlterTable
ALTER TABLE "runs" ADD COLUMN "idle_start_ns" BIGINT,
ADD COLUMN "idle_end_ns" BIGINT;

-- CreateTable
CREATE TABLE "run_tokens" (
    "run_id" UUID NOT NULL,
    "token_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "run_tokens_pkey" PRIMARY KEY ("run_id")
);

-- CreateTable
CREATE TABLE "telemetry_batches" (
    "run_id" UUID NOT NULL,
    "node" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "samples" INTEGER NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "telemetry_batches_pkey" PRIMARY KEY ("run_id","node","seq")
);

-- CreateTable
-- lz4 rather than the default pglz: several times faster to compress, which is what ingest waits on.
CREATE TABLE "telemetry_chunks" (
    "run_id" UUID NOT NULL,
    "node" TEXT NOT NULL,
    "sensor" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "t_first" DOUBLE PRECISION NOT NULL,
    "t_last" DOUBLE PRECISION NOT NULL,
    "n" INTEGER NOT NULL,
    "t" BYTEA COMPRESSION lz4 NOT NULL,
    "v" BYTEA COMPRESSION lz4 NOT NULL,

    CONSTRAINT "telemetry_chunks_pkey" PRIMARY KEY ("run_id","node","sensor","seq")
);

-- CreateTable
CREATE TABLE "telemetry_sensors" (
    "run_id" UUID NOT NULL,
    "node" TEXT NOT NULL,
    "sensor" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "unit" TEXT,
    "wrap_at" DOUBLE PRECISION,

    CONSTRAINT "telemetry_sensors_pkey" PRIMARY KEY ("run_id","node","sensor")
);

-- CreateTable
CREATE TABLE "run_energy" (
    "run_id" UUID NOT NULL,
    "computed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "time_s" DOUBLE PRECISION NOT NULL,
    "energy_j" DOUBLE PRECISION NOT NULL,
    "method" TEXT NOT NULL,
    "coverage" DOUBLE PRECISION NOT NULL,
    "result" JSONB NOT NULL,

    CONSTRAINT "run_energy_pkey" PRIMARY KEY ("run_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "run_tokens_token_hash_key" ON "run_tokens"("token_hash");

-- AddForeignKey
ALTER TABLE "run_tokens" ADD CONSTRAINT "run_tokens_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "telemetry_batches" ADD CONSTRAINT "telemetry_batches_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "telemetry_chunks" ADD CONSTRAINT "telemetry_chunks_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "telemetry_sensors" ADD CONSTRAINT "telemetry_sensors_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "run_energy" ADD CONSTRAINT "run_energy_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
