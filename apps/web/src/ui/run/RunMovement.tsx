// A run's data movement (its energy view's `dataMovement`): per kind of link the bytes over the
// window, the mean rate and J per GB; how much of the GPUs' busy time overlapped with transfers;
// bytes per phase beside the phase's energy where the workload marked phases; each link's bytes.
import { formatBytes, formatPercent } from '../../format';
import { kindLabel, overlapText, runKindRows, runPhaseMovement } from '../../movement';
import type { RunDataMovement } from '../../types';

export function RunMovement({ movement: m }: { movement: RunDataMovement }) {
  const phases = runPhaseMovement(m);
  return (
    <div data-testid="run-movement">
      <div className="tablewrap">
        <table className="movement" data-testid="run-movement-kinds">
          <thead>
            <tr>
              <th scope="col">Link</th><th scope="col">Bytes</th><th scope="col" title="bytes over the window's length, summed over links">Mean rate</th>
              <th scope="col" title="the run's whole energy per gigabyte over this kind (the kinds share that energy)">J/GB</th><th scope="col">Links</th><th scope="col">Coverage</th>
            </tr>
          </thead>
          <tbody>
            {runKindRows(m).map((k) => (
              <tr key={k.kind} data-kind={k.kind}>
                <th scope="row">{k.label}</th>
                <td className="num" data-figure="bytes">{k.bytes}</td>
                <td className="num" data-figure="rate">{k.rate}</td>
                <td className="num" data-figure="joules-per-gb">{k.joulesPerGB}</td>
                <td className="num">{k.links}</td>
                <td className="num">{k.coverage}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p data-testid="run-overlap">{overlapText(m.overlap)}</p>
      {phases && (
        <>
          <h3>Bytes per phase</h3>
          <div className="tablewrap">
            <table className="movement" data-testid="run-movement-phases">
              <thead>
                <tr>
                  <th scope="col" rowSpan={2}>Phase</th><th scope="col" rowSpan={2} title="node-seconds, nested phases included">Time</th><th scope="col" rowSpan={2} title="nested phases included">Energy</th>
                  {phases.kinds.map((k) => <th key={k} scope="colgroup" colSpan={2}>{kindLabel(k)}</th>)}
                </tr>
                <tr>{phases.kinds.map((k) => [<th key={`${k}-b`} scope="col">Bytes</th>, <th key={`${k}-j`} scope="col">J/GB</th>])}</tr>
              </thead>
              <tbody>
                {phases.rows.map((p) => (
                  <tr key={p.name} data-phase={p.name}>
                    <th scope="row">{p.name}</th>
                    <td className="num">{p.time}</td>
                    <td className="num">{p.energy}</td>
                    {phases.kinds.map((k) => [
                      <td key={`${k}-b`} className="num" data-kind={k}>{p.kinds[k]!.bytes}</td>,
                      <td key={`${k}-j`} className="num" data-kind={k}>{p.kinds[k]!.joulesPerGB}</td>,
                    ])}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p className="small">Bytes while the phase was open, nested phases included, beside the phase&apos;s inclusive energy (as in the table of energy by phase).</p>
        </>
      )}
      <details>
        <summary>Per link ({m.links.length})</summary>
        <div className="tablewrap">
          <table className="movement">
            <thead><tr><th scope="col">Node</th><th scope="col">Device</th><th scope="col">Link</th><th scope="col">Bytes</th><th scope="col">Sensors</th><th scope="col">Coverage</th></tr></thead>
            <tbody>
              {m.links.map((l) => (
                <tr key={`${l.node}-${l.device}-${l.kind}`}>
                  <td>{l.node}</td><td>{l.device}</td><td>{kindLabel(l.kind)}</td><td className="num">{formatBytes(l.bytes)}</td>
                  <td className="small">{l.sensors.join(', ')} ({l.sources.join(', ')})</td><td className="num">{formatPercent(l.coverage)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
      {m.warnings.length > 0 && <ul className="warnings">{m.warnings.map((w) => <li key={w}>{w}</li>)}</ul>}
      <p className="small">GB = 10⁹ bytes, integrated from the agents&apos; B/s sensors over the workload window.</p>
    </div>
  );
}
