import type { RunSummary } from '@erg/client';
import type { Api } from './context';

/** The API's largest page of runs. */
const PAGE = 10_000;

/** Every run of a campaign (optionally in one state), in run order, page by page. */
export async function fetchRuns(api: Api, campaignId: string, state?: RunSummary['state'], signal?: AbortSignal): Promise<RunSummary[]> {
  const runs: RunSummary[] = [];
  for (;;) {
    const page = await api.call((c) =>
      c.GET('/v1/campaigns/{id}/runs', {
        params: { path: { id: campaignId }, query: { limit: PAGE, offset: runs.length, ...(state ? { state } : {}) } },
        ...(signal ? { signal } : {}),
      }),
    );
    runs.push(...page.items);
    if (page.items.length === 0 || runs.length >= page.total) return runs;
  }
}
