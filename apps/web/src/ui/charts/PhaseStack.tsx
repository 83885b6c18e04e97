// A campaign's energy by phase: per configuration its phases' mean self energy stacked (so the
// stack is its mean energy), the unmarked time on top of the stack; and where the energy went
// between the runtime- and the energy-optimal configuration, phase by phase.
import { useId } from 'react';
import { formatEnergy, formatPercent } from '../../format';
import { campaignPhaseNames, differenceBars, phasePalette, phaseStackedBars, UNMARKED } from '../../phases';
import type { CampaignPhases, PhaseComparison } from '../../types';
import { PatternDefs, patternId } from './Patterns';
import { PhaseSwatch } from './PhaseLegend';
import { StackChart } from './StackedBar';

/** The unmarked time's fill: nearly blank, as on the run page's trace. */
const UNMARKED_FILL = '#f2f2f2';

/** One pattern index per phase, the same in the stacks and the comparison. */
export function campaignPalette(phases: CampaignPhases): Map<string, number> {
  return phasePalette(campaignPhaseNames(phases));
}

export function PhaseStack({ phases, order, name }: { phases: CampaignPhases; order: string[]; name: string }) {
  const palette = campaignPalette(phases);
  const L = phaseStackedBars(phases, 640, 220, order);
  if (L.bars.length === 0) return <p>No configuration has runs with phases yet.</p>;
  return (
    <StackChart
      layout={L}
      caption="Mean self energy by phase per configuration: each stack is the configuration's mean energy over its runs with phases; the unmarked time on top."
      ariaLabel="stacked bar of energy by phase"
      label="energy by phase"
      testId="phases-chart"
      exportName={`${name}-phases`}
      fill={(kind, _i, prefix) => (kind === UNMARKED ? UNMARKED_FILL : `url(#${patternId(prefix, palette.get(kind) ?? 0)})`)}
    />
  );
}

const signed = (j: number) => `${j > 0 ? '+' : ''}${formatEnergy(j)}`;

export function PhaseComparisonView({ phases, comparison: c }: { phases: CampaignPhases; comparison: PhaseComparison }) {
  const prefix = useId().replace(/:/g, '');
  const palette = campaignPalette(phases);
  if (c.runtimeOptimal === c.energyOptimal) {
    return <p data-testid="comparison-summary">The fastest configuration, <b>{c.runtimeOptimal}</b>, is also the one that used the least energy: there is no difference between two configurations to explain.</p>;
  }
  const B = differenceBars(c, 110);
  const more = c.differenceJ >= 0;
  return (
    <>
      <p data-testid="comparison-summary">
        The fastest configuration, <b>{c.runtimeOptimal}</b>, used <b>{formatEnergy(Math.abs(c.differenceJ))}</b> {more ? 'more' : 'less'} energy per run than the one that used the least, <b>{c.energyOptimal}</b>
        {B.energyOptimalJ > 0 ? ` (${formatPercent(c.differenceJ / B.energyOptimalJ, { signed: true })})` : ''}. By phase (mean self energy per run, so the differences add up to that), the largest first:
      </p>
      <svg width="0" height="0" aria-hidden="true" style={{ position: 'absolute' }}><PatternDefs prefix={prefix} /></svg>
      <div className="tablewrap">
        <table className="comparison" data-testid="phase-comparison">
          <thead>
            <tr>
              <th scope="col">Phase</th><th scope="col" title={c.runtimeOptimal}>Fastest</th><th scope="col" title={c.energyOptimal}>Least energy</th>
              <th scope="col">Difference</th><th scope="col" title="of the difference">Share</th><th scope="col"><span className="sr-only">Difference as a bar</span></th>
            </tr>
          </thead>
          <tbody>
            {B.rows.map((r) => {
              const index = r.name === UNMARKED ? null : (palette.get(r.name) ?? 0);
              return (
                <tr key={r.name} data-phase={r.name}>
                  <th scope="row" className="phase-name"><PhaseSwatch prefix={prefix} index={index} /> {r.name}</th>
                  <td className="num">{formatEnergy(r.runtimeOptimalJ)}</td>
                  <td className="num">{formatEnergy(r.energyOptimalJ)}</td>
                  <td className="num">{signed(r.differenceJ)}</td>
                  <td className="num">{formatPercent(r.shareOfDifference)}</td>
                  <td>
                    <svg width={B.width} height="14" role="img" aria-label={`${r.name}: ${signed(r.differenceJ)}`}>
                      <rect x={r.x} y="2" width={Math.max(0, r.width)} height="10" fill={index === null ? UNMARKED_FILL : `url(#${patternId(prefix, index)})`} stroke="black" strokeWidth="0.5" />
                      <line x1={Math.min(B.width - 0.5, Math.max(0.5, B.zeroX))} x2={Math.min(B.width - 0.5, Math.max(0.5, B.zeroX))} y1="0" y2="14" stroke="#333" />
                    </svg>
                  </td>
                </tr>
              );
            })}
          </tbody>
          <tfoot>
            <tr>
              <th scope="row">Run (mean)</th><td className="num">{formatEnergy(B.runtimeOptimalJ)}</td><td className="num">{formatEnergy(B.energyOptimalJ)}</td>
              <td className="num">{signed(c.differenceJ)}</td><td className="num">{formatPercent(c.differenceJ === 0 ? null : 1)}</td><td />
            </tr>
          </tfoot>
        </table>
      </div>
      <p className="small">Fastest: {c.runtimeOptimal}; least energy: {c.energyOptimal}. Share: of the difference. A bar right of the line: the phase used more energy in the fastest configuration; left: less.</p>
    </>
  );
}
