-- Issue 15 §4, carbon and cost: a cluster's constant grid carbon intensity with its PUE, and its
-- price (both JSON in @erg/spec's ClusterCarbon and ClusterPrice shapes; null: none), and its grid
-- intensity over time, one row per point (a value holds from t until the next point).
ALTER TABLE "clusters" ADD COLUMN "carbon" JSONB, ADD COLUMN "price" JSONB;

CREATE TABLE "cluster_carbon_intensity" (
    "cluster_id" UUID NOT NULL,
    "t" TIMESTAMPTZ(3) NOT NULL,
    "g_co2e_per_kwh" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "cluster_carbon_intensity_pkey" PRIMARY KEY ("cluster_id","t"),
    CONSTRAINT "cluster_carbon_intensity_value_check" CHECK ("g_co2e_per_kwh" >= 0)
);

ALTER TABLE "cluster_carbon_intensity" ADD CONSTRAINT "cluster_carbon_intensity_cluster_id_fkey" FOREIGN KEY ("cluster_id") REFERENCES "clusters"("id") ON DELETE CASCADE ON UPDATE CASCADE;
