// A run's carbon (gCO₂e, with the intensity applied and where it came from) and cost (with each
// part its cluster prices), as its energy was computed with its cluster's settings of then.
import { runCarbonFacts, runCostFacts } from '../../footprint';
import type { RunEnergy } from '../../types';

export function RunCarbonCost({ figures: f }: { figures: RunEnergy }) {
  if (!f.carbon && !f.cost) return null;
  const facts = [...(f.carbon ? runCarbonFacts(f.carbon) : []), ...(f.cost ? runCostFacts(f.cost) : [])];
  return (
    <div data-testid="run-carbon-cost">
      <dl className="facts prose">
        {facts.map((x) => <div key={x.term}><dt>{x.term}</dt><dd>{x.value}</dd></div>)}
      </dl>
      <p className="small">Computed with the cluster&apos;s carbon and price settings when the run&apos;s energy was computed; a later change applies to runs computed after it.</p>
    </div>
  );
}
