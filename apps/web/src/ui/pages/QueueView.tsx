// The home page: every cluster with its runs by state, and the queued and running runs across
// campaigns in one table that renders only the rows on screen (10,000 runs stay responsive).
// Filters live in the hash query; the queue is kept live by useLiveQueue.
import { useLayoutEffect, useMemo, useRef } from 'react';
import { formatCount } from '../../format';
import { PERF } from '../../perf';
import { filtersFromQuery, queuePath } from '../../queue';
import { useNow } from '../context';
import { ClusterCards } from '../queue/ClusterCards';
import { QueueFilterForm } from '../queue/QueueFilterForm';
import { RunTable } from '../queue/RunTable';
import { useLiveQueue } from '../queue/useLiveQueue';

/** The most runs GET /v1/queue returns at once; beyond that it says `truncated`. */
const QUEUE_LIMIT = 5000;

export function QueueView({ query }: { query: Record<string, string> }) {
  const filters = useMemo(() => filtersFromQuery(query), [query]);
  const { queue, error } = useLiveQueue(queuePath(filters, QUEUE_LIMIT));
  const now = useNow(1000);
  useFirstRenderMark(queue !== null);

  return (
    <section aria-labelledby="queue-title">
      <h1 id="queue-title">Queue</h1>
      {error && <p className="error" role="alert">{error}</p>}
      <ClusterCards queue={queue} />
      <QueueFilterForm filters={filters} queue={queue} />
      <p className="small" data-testid="queue-total">
        {queue ? `${formatCount(queue.runs.length)} of ${formatCount(queue.total)} runs shown${queue.truncated ? ' (truncated: narrow the filters)' : ''}` : 'Loading…'}
      </p>
      {queue && <RunTable runs={queue.runs} now={now} />}
    </section>
  );
}

/** The first paint of the table with its rows: the benchmark's "time to first render". */
function useFirstRenderMark(loaded: boolean): void {
  const first = useRef(true);
  useLayoutEffect(() => {
    if (loaded && first.current) {
      first.current = false;
      requestAnimationFrame(() => {
        performance.mark(PERF.queueTableRendered);
        performance.measure(PERF.queueFirstRender, PERF.queueFetchStart, PERF.queueTableRendered);
      });
    }
  }, [loaded]);
}
