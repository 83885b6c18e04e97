// The queue's filters (cluster, campaign, state, owner), kept in the hash query, and the CSV export.
import { useEffect, useMemo, useState } from 'react';
import { FILTER_KEYS, queueCsv, type QueueFilters } from '../../queue';
import { formatHash } from '../../route';
import { UNFINISHED_RUN_STATES, type Queue } from '../../types';
import { downloadCsv } from '../exporting';

export function QueueFilterForm({ filters, queue }: { filters: QueueFilters; queue: Queue | null }) {
  const setFilter = (key: keyof QueueFilters, value: string) => {
    const next: Record<string, string> = {};
    for (const k of FILTER_KEYS) if (filters[k]) next[k] = filters[k]!;
    if (value) next[key] = value; else delete next[key];
    location.hash = formatHash({ page: 'queue', query: next });
  };

  const campaigns = useMemo(() => {
    const m = new Map<string, string>();
    for (const r of queue?.runs ?? []) m.set(r.campaignId, r.campaignName);
    if (filters.campaign && !m.has(filters.campaign)) m.set(filters.campaign, filters.campaign);
    return [...m.entries()].sort((a, b) => a[1].localeCompare(b[1]));
  }, [queue, filters.campaign]);

  return (
    <form className="filters" aria-label="filters" onSubmit={(e) => e.preventDefault()}>
      <label>Cluster{' '}
        <select value={filters.cluster ?? ''} onChange={(e) => setFilter('cluster', e.target.value)}>
          <option value="">all</option>
          {(queue?.clusters ?? []).map((c) => <option key={c.name} value={c.name}>{c.name}</option>)}
        </select>
      </label>
      <label>Campaign{' '}
        <select value={filters.campaign ?? ''} onChange={(e) => setFilter('campaign', e.target.value)}>
          <option value="">all</option>
          {campaigns.map(([id, name]) => <option key={id} value={id}>{name} ({id.slice(0, 8)})</option>)}
        </select>
      </label>
      <label>State{' '}
        <select value={filters.state ?? ''} onChange={(e) => setFilter('state', e.target.value)}>
          <option value="">queued and running</option>
          {UNFINISHED_RUN_STATES.map((s) => <option key={s} value={s}>{s}</option>)}
        </select>
      </label>
      <OwnerFilter value={filters.owner ?? ''} onChange={(v) => setFilter('owner', v)} />
      <button type="button" onClick={() => queue && downloadCsv(queueCsv(queue.runs, Date.now()), 'erg-queue.csv')} disabled={!queue}>Export CSV</button>
    </form>
  );
}

function OwnerFilter({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  return (
    <label>Owner{' '}
      <input value={text} onChange={(e) => setText(e.target.value)} onBlur={() => text !== value && onChange(text.trim())}
        onKeyDown={(e) => { if (e.key === 'Enter') onChange(text.trim()); }} placeholder="any" size={10} title="a user's name, or suite:NAME for the runs a suite started" />
    </label>
  );
}
