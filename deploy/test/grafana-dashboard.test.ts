// The Grafana dashboard must only query metrics erg registers: a renamed metric fails here, not
// as an empty panel in production. Names come from the registries themselves.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Registry } from 'prom-client';
import { createApiMetrics } from '../../apps/api/src/metrics';
import { createSchedulerMetrics } from '../../apps/scheduler/src/metrics';

interface Panel { type: string; title?: string; datasource?: { uid?: string }; targets?: { expr?: string }[]; panels?: Panel[] }

const dashboard = JSON.parse(readFileSync(path.join(__dirname, '..', 'grafana', 'erg-dashboard.json'), 'utf8')) as {
  schemaVersion: number;
  templating: { list: { name: string; type: string; query: unknown; definition?: string }[] };
  panels: Panel[];
};

/** Every series name a registry exposes: histograms as _bucket/_sum/_count, summaries with _sum/_count. */
function seriesNames(registry: Registry): Set<string> {
  const names = new Set<string>();
  for (const m of registry.getMetricsAsArray() as unknown as { name: string; constructor: { name: string } }[]) {
    names.add(m.name);
    for (const suffix of ['_bucket', '_sum', '_count']) {
      if (m.constructor.name === 'Histogram' || (m.constructor.name === 'Summary' && suffix !== '_bucket')) names.add(m.name + suffix);
    }
  }
  return names;
}

function allPanels(panels: Panel[]): Panel[] {
  return panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
}

describe('deploy/grafana/erg-dashboard.json', () => {
  const api = createApiMetrics();
  const scheduler = createSchedulerMetrics();
  const known = new Set([...seriesNames(api.registry), ...seriesNames(scheduler.registry)]);
  const panels = allPanels(dashboard.panels).filter((p) => p.type !== 'row');
  const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr ?? '' })));
  const used = exprs.flatMap(({ panel, expr }) => [...expr.matchAll(/\berg_[a-zA-Z0-9_]+/g)].map((m) => ({ panel, name: m[0] })));

  test('every metric a panel queries is registered by the API or the scheduler', () => {
    expect(used.length).toBeGreaterThan(10);
    expect(used.filter((u) => !known.has(u.name))).toEqual([]);
  });

  test("every erg metric of the API and the scheduler (not the process defaults) has a panel", () => {
    const own = [...api.registry.getMetricsAsArray(), ...scheduler.registry.getMetricsAsArray()]
      .map((m) => m.name)
      .filter((n) => !n.startsWith('erg_api_') && !n.startsWith('erg_scheduler_'));
    const queried = new Set(used.map((u) => u.name.replace(/_(bucket|sum|count)$/, '')));
    expect(own.filter((n) => !queried.has(n))).toEqual([]);
  });

  test('queries go through the ${datasource} variable; clusters come from erg_runs', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    const vars = Object.fromEntries(dashboard.templating.list.map((v) => [v.name, v]));
    expect(vars.datasource).toMatchObject({ type: 'datasource', query: 'prometheus' });
    expect(vars.cluster).toMatchObject({ type: 'query', definition: 'label_values(erg_runs, cluster)' });
    expect(panels.filter((p) => p.datasource?.uid !== '${datasource}').map((p) => p.title)).toEqual([]);
    expect(exprs.filter((e) => e.expr.trim() === '')).toEqual([]);
  });
});
