// Parameter effects: for each parameter, mean energy and mean time per value (averaged over the
// other parameters), as two small bar panels with the figures written on the bars.
import { useRef } from 'react';
import { parameterEffects } from '../../effects';
import { formatEnergy, formatTime } from '../../format';
import type { ConfigurationResult } from '../../types';
import { SvgExport } from './ExportButtons';

export function EffectsPlot({ configurations, name }: { configurations: ConfigurationResult[]; name: string }) {
  const effects = parameterEffects(configurations);
  if (effects.length === 0) return <p>No parameter takes two or more values among the measured configurations.</p>;
  return (
    <div className="effects">
      {effects.map((e) => <EffectPanel key={e.parameter} effect={e} name={name} />)}
    </div>
  );
}

function EffectPanel({ effect, name }: { effect: ReturnType<typeof parameterEffects>[number]; name: string }) {
  const ref = useRef<SVGSVGElement>(null);
  const rowH = 20;
  // Room for the longest `name=value` label (≈ 6.5 px a character at 11 px), within reason.
  const longest = Math.max(...effect.levels.map((l) => `${effect.parameter}=${l.value}`.length));
  const W = 620, labelW = Math.min(240, Math.max(60, 10 + 6.5 * longest)), panelW = (W - labelW - 20) / 2;
  const H = 28 + effect.levels.length * rowH + 8;
  const maxE = Math.max(1e-9, ...effect.levels.map((l) => l.meanEnergyJ ?? 0));
  const maxT = Math.max(1e-9, ...effect.levels.map((l) => l.meanTimeS ?? 0));
  return (
    <figure className="chart">
      <figcaption>
        <span>Effect of <b>{effect.parameter}</b>: mean over the other parameters.</span>
        <SvgExport target={ref} name={`${name}-effect-${effect.parameter}`} label={`effect of ${effect.parameter}`} />
      </figcaption>
      <svg ref={ref} viewBox={`0 0 ${W} ${H}`} width="100%" role="img" aria-label={`effect of ${effect.parameter} on energy and time`} fontFamily="sans-serif" fontSize="11" data-testid="effect-chart">
        <rect width={W} height={H} fill="white" />
        <text x={labelW} y={14} fontWeight="bold">mean energy</text>
        <text x={labelW + panelW + 20} y={14} fontWeight="bold">mean time</text>
        {effect.levels.map((l, i) => {
          const y = 24 + i * rowH;
          const we = ((l.meanEnergyJ ?? 0) / maxE) * (panelW - 70);
          const wt = ((l.meanTimeS ?? 0) / maxT) * (panelW - 70);
          return (
            <g key={l.value}>
              <text x={labelW - 6} y={y + 12} textAnchor="end">{effect.parameter}={l.value}</text>
              <rect x={labelW} y={y} width={we} height={rowH - 6} fill="#9bb7d4" stroke="black" strokeWidth="0.5" />
              <text x={labelW + we + 4} y={y + 11}>{formatEnergy(l.meanEnergyJ)}</text>
              <rect x={labelW + panelW + 20} y={y} width={wt} height={rowH - 6} fill="#e3b98f" stroke="black" strokeWidth="0.5" strokeDasharray="3 2" />
              <text x={labelW + panelW + 24 + wt} y={y + 11}>{formatTime(l.meanTimeS)}</text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}
