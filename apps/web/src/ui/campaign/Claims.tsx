// What the campaign's results claim, and how sure they are (results.claims): the summary, the
// best per objective with who it is tied with and each ratio's interval, the trade-off with both
// intervals, the entries off the front with the comparisons that placed them, and every
// comparison of the family with its p-values. Nothing when fewer than two configurations have a point.
import { formatP } from '../../format';
import { claimsLevelText, paretoDetailLines, rankLines, ratioText } from '../../results';
import type { CampaignResults } from '../../types';

export function ClaimsSection({ results }: { results: CampaignResults }) {
  const claims = results.claims;
  if (!claims) return null;
  const ranks = rankLines(claims);
  const offFront = paretoDetailLines(claims);
  return (
    <section aria-labelledby="claims-title" data-testid="claims">
      <h2 id="claims-title">Claims ({claimsLevelText(claims)})</h2>
      <p data-testid="claims-summary" data-distinguishable={claims.distinguishable}>{capitalised(claims.summary)}.</p>
      <ul data-testid="claims-ranks">
        {ranks.map((r) => <li key={r.objective} data-objective={r.objective}><strong>{r.label}:</strong> {r.text}</li>)}
        {claims.tradeoff && <li data-testid="claims-tradeoff" data-distinguishable={claims.tradeoff.distinguishable}><strong>Trade-off:</strong> {claims.tradeoff.statement}</li>}
      </ul>
      {offFront.length > 0 && (
        <ul data-testid="claims-pareto">{offFront.map((line) => <li key={line}>{line}</li>)}</ul>
      )}
      <details>
        <summary>Every comparison ({claims.comparisons.length}; {claims.family} tested)</summary>
        <p className="small">{claims.method}.</p>
        <div className="tablewrap short">
          <table className="comparisons" data-testid="claims-comparisons">
            <thead>
              <tr>
                <th scope="col">Objective</th><th scope="col">Reference</th><th scope="col">Other</th><th scope="col">Ratio [interval]</th>
                <th scope="col">p</th><th scope="col">Holm p</th><th scope="col">Distinguishable</th><th scope="col">n</th>
              </tr>
            </thead>
            <tbody>
              {claims.comparisons.map((c) => (
                <tr key={c.id} data-id={c.id}>
                  <td>{c.objective}</td><td>{c.reference}</td><td>{c.other}</td>
                  <td className="num" title={c.note ?? undefined}>{ratioText(c)}</td>
                  <td className="num">{formatP(c.p)}</td><td className="num">{formatP(c.pAdjusted)}</td>
                  <td>{c.distinguishable ? 'yes' : c.p === null ? 'not tested' : 'no (tied)'}</td>
                  <td className="num">{c.n.join(' / ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </section>
  );
}

function capitalised(s: string): string {
  return s.length === 0 ? s : s[0]!.toUpperCase() + s.slice(1);
}
