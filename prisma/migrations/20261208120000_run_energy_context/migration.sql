-- What a run's figures were computed from beyond its own rows (issue 26's evidence bundle): the
-- other jobs that shared its cluster's nodes then, its cluster's carbon and price settings and its
-- carbon-intensity series, as refreshRunEnergy read them (RunEnergyContext as JSON). They can
-- change after the figures are computed without making them stale; the evidence bundle writes
-- these, not what the cluster holds at export, so its figures recompute to the stored ones.
-- Null: figures computed before erg kept it.
ALTER TABLE "run_energy" ADD COLUMN "context" JSONB;
