// Hash routes: `#/queue?cluster=…&state=…`, `#/campaigns/<id>`, `#/runs/<id>`, `#/sign-in`. The
// API serves only index.html at `/`, so every page lives behind the hash; the queue view's filters
// live in the hash's query so that a link or a reload keeps them.

export type Route =
  | { page: 'queue'; query: Record<string, string> }
  | { page: 'campaign'; id: string; query: Record<string, string> }
  | { page: 'run'; id: string; query: Record<string, string> }
  | { page: 'sign-in'; query: Record<string, string> };

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#/, '');
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const query: Record<string, string> = {};
  if (q >= 0) for (const [k, v] of new URLSearchParams(raw.slice(q + 1))) if (v !== '') query[k] = v;
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'campaigns' && parts[1]) return { page: 'campaign', id: parts[1], query };
  if (parts[0] === 'runs' && parts[1]) return { page: 'run', id: parts[1], query };
  if (parts[0] === 'sign-in') return { page: 'sign-in', query };
  return { page: 'queue', query };
}

/** The hash for a route; empty query values are left out, keys sorted so equal routes give equal hashes. */
export function formatHash(route: Route): string {
  const path = route.page === 'campaign' ? `/campaigns/${encodeURIComponent(route.id)}`
    : route.page === 'run' ? `/runs/${encodeURIComponent(route.id)}`
    : route.page === 'sign-in' ? '/sign-in' : '/queue';
  const entries = Object.entries(route.query).filter(([, v]) => v !== '' && v !== undefined).sort(([a], [b]) => a.localeCompare(b));
  const qs = new URLSearchParams(entries).toString();
  return `#${path}${qs ? `?${qs}` : ''}`;
}

export const hrefCampaign = (id: string): string => formatHash({ page: 'campaign', id, query: {} });
export const hrefRun = (id: string): string => formatHash({ page: 'run', id, query: {} });
