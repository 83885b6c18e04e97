// A run's nodes: what each was (its fingerprint, summarised in the table, every fact in its
// details) and the power state the node helper set there (requested, before, applied per GPU).
import { asSentence, hasPowerRecord, NO_PROVENANCE, nodeRows, powerStateText, type NodeRow } from '../../run-info';
import type { Run } from '../../types';

export function RunNodes({ run }: { run: Run }) {
  const rows = nodeRows(run);
  return (
    <section aria-labelledby="nodes-title">
      <h2 id="nodes-title">Nodes and provenance</h2>
      {rows.length === 0 ? (
        <p data-testid="no-provenance">{asSentence(NO_PROVENANCE)}</p>
      ) : (
        <>
          <div className="tablewrap">
            <table className="nodes" data-testid="run-nodes">
              <thead><tr><th scope="col">Node</th><th scope="col">Fingerprint</th><th scope="col">Machine</th><th scope="col">Power state</th></tr></thead>
              <tbody>
                {rows.map((n) => (
                  <tr key={n.node} data-node={n.node}>
                    <td>{n.node}</td>
                    <td><code>{n.fingerprint}</code></td>
                    <td className="wrap">{n.summary}</td>
                    <td className={n.power && !n.power.ok ? 'error wrap' : 'wrap'}>{n.power ? (n.power.ok ? 'applied' : 'not applied') : 'not set by erg'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {rows.filter((n) => n.facts.length > 0).map((n) => (
            <details key={n.node} className="provenance">
              <summary>{n.node}: everything its agent recorded</summary>
              <dl className="facts">{n.facts.map(([label, value]) => <div key={label}><dt>{label}</dt><dd>{value}</dd></div>)}</dl>
            </details>
          ))}
        </>
      )}
      {hasPowerRecord(run) && <PowerRecords rows={rows} requested={powerStateText(run.nodes.find((n) => n.power)?.power?.requested)} />}
    </section>
  );
}

function PowerRecords({ rows, requested }: { rows: NodeRow[]; requested: string }) {
  return (
    <div data-testid="power-records">
      <h3>Power state set by the node helper (requested: {requested})</h3>
      {rows.map((n) => (
        <div key={n.node}>
          <p className={n.power?.ok ? '' : 'error'}>{n.node}: {n.power ? n.power.status : 'no record from the node helper: what was in force there is not known'}</p>
          {n.power && n.power.rows.length > 0 && (
            <div className="tablewrap">
              <table className="power-record">
                <thead><tr><th scope="col">GPU</th><th scope="col">Setting</th><th scope="col">Requested</th><th scope="col">Before</th><th scope="col">Applied</th></tr></thead>
                <tbody>
                  {n.power.rows.map((r) => (
                    <tr key={`${r.target}-${r.setting}`}>
                      <td>{r.target}</td><td>{r.setting}</td><td className="num">{r.requested}</td><td className="num">{r.previous}</td><td className="num">{r.applied}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
      ))}
    </div>
  );
}
