// One card per cluster: its runs by state and when erg last reached it.
import type { Queue } from '../../types';
import { StateBar } from '../charts/StateBar';

export function ClusterCards({ queue }: { queue: Queue | null }) {
  return (
    <div className="clusters" data-testid="clusters">
      {(queue?.clusters ?? []).map((c) => (
        <article key={c.name} className="cluster" data-cluster={c.name}>
          <h2>{c.name}</h2>
          <StateBar counts={c.runCounts} label={`runs on ${c.name} by state`} />
          <p className="small">
            {c.lastError ? <span className="error">unreachable: {c.lastError}</span> : c.lastContactAt ? `last contact ${new Date(c.lastContactAt).toLocaleTimeString()}` : 'not contacted yet'}
          </p>
        </article>
      ))}
      {queue && queue.clusters.length === 0 && <p>No clusters registered.</p>}
    </div>
  );
}
