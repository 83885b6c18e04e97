// The campaign's validity gates applied to a run (issue 26 §3): whether its measurement is valid
// and why not, then each gate with its worst value, limit and where — the words of `erg run`.
import { runValidityText, VALIDITY_COLUMNS, validityRows } from '../../run-info';
import type { RunEnergy } from '../../types';

export function RunValidity({ figures: f }: { figures: RunEnergy }) {
  const v = f.validity;
  const text = runValidityText(v);
  // Figures computed before erg checked validity have none.
  if (!v || text === null) return null;
  return (
    <div data-testid="run-validity">
      <h3>Validity</h3>
      <p className={v.valid ? 'small' : 'flags'} data-testid="run-validity-text">{text}</p>
      <div className="tablewrap">
        <table className="validity">
          <thead><tr>{VALIDITY_COLUMNS.map((c) => <th key={c} scope="col">{c}</th>)}</tr></thead>
          <tbody>
            {validityRows(v.checks).map((row, i) => (
              <tr key={v.checks[i]!.check} data-check={v.checks[i]!.check} data-status={v.checks[i]!.status}>
                {row.map((cell, j) => <td key={VALIDITY_COLUMNS[j]} className={j === 2 || j === 3 ? 'num' : undefined}>{cell}</td>)}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
