// An adaptive campaign's decisions (decisions.ts): the strategy, the runs used against the grid,
// whether it is still deciding, and per configuration its status, runs and the reason.
import { decisionsSummary, orderedDecisions, STATUS_TEXT } from '../../decisions';
import type { CampaignDecisions } from '../../types';

export function DecisionsSection({ decisions }: { decisions: CampaignDecisions }) {
  const summary = decisionsSummary(decisions);
  return (
    <section aria-labelledby="decisions-title" data-testid="decisions">
      <h2 id="decisions-title">Decisions</h2>
      <p data-testid="decisions-summary">
        Strategy {summary.strategy}. <b>{summary.runs}</b>. <span data-testid="decisions-state">{summary.state}</span>.
      </p>
      {decisions.decisions.length > 0 ? (
        <div className="tablewrap short">
          <table className="decisions" data-testid="decisions-table">
            <thead><tr><th scope="col">Configuration</th><th scope="col">Status</th><th scope="col">Runs</th><th scope="col">Why</th></tr></thead>
            <tbody>
              {orderedDecisions(decisions.decisions).map((d) => (
                <tr key={d.key} data-key={d.key} data-status={d.status}>
                  <td>{d.key}</td>
                  <td><span className={`decision decision-${d.status}`}>{STATUS_TEXT[d.status]}</span></td>
                  <td className="num">{d.n}</td>
                  <td className="small">{d.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : <p className="small">No decisions yet: the first runs of every configuration have not all landed.</p>}
    </section>
  );
}
