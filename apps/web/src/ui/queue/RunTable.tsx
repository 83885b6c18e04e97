// The runs table, rendering only the rows in view (plus a margin) between two spacer rows, so
// 10,000 runs stay responsive.
import { useLayoutEffect, useRef, useState } from 'react';
import { formatElapsed, formatPower, NO_VALUE } from '../../format';
import { elapsedSeconds, visibleRange } from '../../queue';
import { hrefCampaign, hrefRun } from '../../route';
import type { QueueRun } from '../../types';

const ROW_H = 30;

const COLUMNS = ['Campaign', 'Configuration', 'Rep.', 'State', 'Slurm job', 'Partition', 'Nodes', 'In queue / running', 'Power'];

export function RunTable({ runs, now }: { runs: QueueRun[]; now: number }) {
  const box = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    setHeight(el.clientHeight);
    const ro = new ResizeObserver(() => setHeight(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  const [first, last] = visibleRange(scrollTop, height, ROW_H, runs.length);
  return (
    <div className="tablebox" ref={box} onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)} tabIndex={0} aria-label="queued and running runs">
      <table className="runs" data-testid="queue-table" aria-rowcount={runs.length + 1}>
        <thead>
          <tr>{COLUMNS.map((c) => <th key={c} scope="col">{c}</th>)}</tr>
        </thead>
        <tbody>
          {first > 0 && <tr aria-hidden="true" style={{ height: first * ROW_H }} />}
          {runs.slice(first, last).map((r, i) => (
            <tr key={r.id} data-run={r.id} data-state={r.state} aria-rowindex={first + i + 2} style={{ height: ROW_H }}>
              <td><a href={hrefCampaign(r.campaignId)}>{r.campaignName}</a></td>
              <td><a href={hrefRun(r.id)} title={`run ${r.id}`}>{r.configurationKey}</a></td>
              <td className="num">{r.repetition}</td>
              <td><span className={`state state-${r.state}`}>{r.state}</span>{r.reason && r.state !== 'running' ? <span className="small"> ({r.reason})</span> : null}</td>
              <td className="num">{r.slurmJobId ?? NO_VALUE}</td>
              <td>{r.partition ?? NO_VALUE}</td>
              <td className="num" title={r.nodeList ?? undefined}>{r.nodes ?? NO_VALUE}</td>
              <td className="num">{formatElapsed(elapsedSeconds(r, now))}</td>
              <td className="num" data-testid="power">{formatPower(r.powerW)}</td>
            </tr>
          ))}
          {last < runs.length && <tr aria-hidden="true" style={{ height: (runs.length - last) * ROW_H }} />}
        </tbody>
      </table>
      {runs.length === 0 && <p className="empty">No queued or running runs.</p>}
    </div>
  );
}
