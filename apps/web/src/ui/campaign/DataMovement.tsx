// A campaign's data movement (results.dataMovement): bytes against energy over the kind of link
// chosen (only the kinds some configuration measured are offered), and per configuration the
// bytes per run and J per GB of every kind with the share of GPU busy time overlapped with
// transfers. Nothing when no run had a data-movement sensor.
import { useState } from 'react';
import { kindLabel, movementKinds, movementRows, movementScatter, shownKind } from '../../movement';
import type { CampaignResults } from '../../types';
import { MovementScatter } from '../charts/MovementScatter';

export function DataMovementSection({ results, name }: { results: CampaignResults; name: string }) {
  const [chosen, setChosen] = useState<string | null>(null);
  const kinds = movementKinds(results.dataMovement);
  const kind = shownKind(kinds, chosen);
  if (!results.dataMovement || kind === null) return null;
  const rows = movementRows(results, kinds);
  return (
    <section aria-labelledby="movement-title" data-testid="data-movement">
      <h2 id="movement-title">Data movement against energy</h2>
      <div className="movement-chart">
        <form className="filters" aria-label="link kind" onSubmit={(e) => e.preventDefault()}>
          <label>Link{' '}
            <select data-testid="movement-kind" value={kind} onChange={(e) => setChosen(e.target.value)}>
              {kinds.map((k) => <option key={k} value={k}>{kindLabel(k)}</option>)}
            </select>
          </label>
        </form>
        <MovementScatter layout={movementScatter(results, kind, 640, 380)} name={name} />
      </div>
      <div className="tablewrap">
        <table className="movement" data-testid="movement-table">
          <thead>
            <tr>
              <th scope="col" rowSpan={2}>Configuration</th><th scope="col" rowSpan={2}>n</th>
              {kinds.map((k) => <th key={k} scope="colgroup" colSpan={2}>{kindLabel(k)}</th>)}
              <th scope="col" rowSpan={2} title="the share of GPU busy time during which the GPU's links moved data">Transfer overlap</th>
            </tr>
            <tr>
              {kinds.map((k) => [
                <th key={`${k}-bytes`} scope="col" data-kind={k}>per run (± 95 %)</th>,
                <th key={`${k}-jpgb`} scope="col" data-kind={k}>J/GB</th>,
              ])}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.key} data-key={r.key}>
                <th scope="row">{r.key}</th>
                <td className="num">{r.n}</td>
                {kinds.map((k) => [
                  <td key={`${k}-bytes`} className="num" data-kind={k} data-figure="bytes">{r.kinds[k]!.bytes}</td>,
                  <td key={`${k}-jpgb`} className="num" data-kind={k} data-figure="joules-per-gb">{r.kinds[k]!.joulesPerGB}</td>,
                ])}
                <td className="num" data-figure="overlap">{r.overlap}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p className="small">
        Means over each configuration&apos;s runs that measured the link (GB = 10⁹ bytes). J/GB is the run&apos;s whole energy per gigabyte over that kind of link: the kinds share
        that energy, so do not add them. Transfer overlap is the share of GPU busy time during which the GPU&apos;s links moved data.
      </p>
    </section>
  );
}
