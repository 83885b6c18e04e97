-- Figures stored before counter ranges were bounded (a sensor declaring wrapAt: 1e308 that went
-- backwards) may hold Infinity or NaN: their result JSON then has null where a number belongs,
-- and GET /v1/runs/{id}/energy answered 500. Mark them stale: the scheduler recomputes them at its
-- next tick, reading such a range as unknown (@erg/energy usableWrapAt).
INSERT INTO run_energy_dirty (run_id)
SELECT run_id FROM run_energy
WHERE energy_j IN ('Infinity'::float8, '-Infinity'::float8, 'NaN'::float8)
   OR time_s IN ('Infinity'::float8, '-Infinity'::float8, 'NaN'::float8)
   OR coverage IN ('Infinity'::float8, '-Infinity'::float8, 'NaN'::float8)
ON CONFLICT (run_id) DO UPDATE SET version = run_energy_dirty.version + 1;
