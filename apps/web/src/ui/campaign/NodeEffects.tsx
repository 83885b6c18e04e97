// How the nodes the campaign's runs ran on differ (results.nodes): per node the mean relative
// residual of time and energy with its interval, whether it measures differently from the
// others, and the configurations confounded with one node. Nothing when the runs used one node.
import { confoundedLines, NODE_EFFECT_HEADERS, nodeEffectRows } from '../../results';
import type { CampaignResults } from '../../types';

export function NodeEffectsSection({ results }: { results: CampaignResults }) {
  const nodes = results.nodes;
  if (!nodes) return null;
  const confounded = confoundedLines(nodes);
  return (
    <section aria-labelledby="nodes-title" data-testid="node-effects">
      <h2 id="nodes-title">Node effects ({nodes.nodes} nodes)</h2>
      <div className="tablewrap short">
        <table className="node-effects">
          <thead><tr>{NODE_EFFECT_HEADERS.map((h) => <th key={h} scope="col">{h}</th>)}</tr></thead>
          <tbody>
            {nodeEffectRows(nodes).map((row) => (
              <tr key={row[0]} data-node={row[0]}>{row.map((cell, i) => <td key={i} className={i > 0 && i < 4 ? 'num' : undefined}>{cell}</td>)}</tr>
            ))}
          </tbody>
        </table>
      </div>
      <p className="small">{nodes.note}.</p>
      {confounded.length > 0 && (
        <>
          <p>Confounded with one node (their figures cannot be told apart from the node&apos;s effect):</p>
          <ul data-testid="node-confounded">{confounded.map((c) => <li key={c}>{c}</li>)}</ul>
        </>
      )}
    </section>
  );
}
