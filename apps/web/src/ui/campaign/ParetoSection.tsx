// The Pareto plot with its objectives: two selects of time, energy, EDP and — where some
// configuration has them — carbon and cost. The default pair (time, energy) is the page's own
// results; another pair is fetched with ?objectives=, which decides the front on it, and again
// whenever the page's results change (live updates).
import { useEffect, useRef, useState } from 'react';
import {
  availableObjectives, chooseObjective, DEFAULT_OBJECTIVES, objectiveInfo, objectivesQuery, resultsOnObjectives, usableObjectives, type Objective, type ObjectivePair,
} from '../../objectives';
import type { CampaignResults } from '../../types';
import { ParetoPlot } from '../charts/ParetoPlot';
import { useGet } from '../context';

export function ParetoSection({ campaignId, results, name }: { campaignId: string; results: CampaignResults; name: string }) {
  const [wanted, setWanted] = useState<ObjectivePair>(DEFAULT_OBJECTIVES);
  const available = availableObjectives(results);
  const pair = usableObjectives(wanted, available);
  const query = objectivesQuery(pair);
  const fetched = useGet<CampaignResults>(query === '' ? null : `/v1/campaigns/${campaignId}/results${query}`);
  // The page's results changed (a run ended): the front on other objectives may have too.
  const seen = useRef(results);
  const { reload } = fetched;
  useEffect(() => {
    if (seen.current === results) return;
    seen.current = results;
    if (query !== '') reload();
  }, [results, query, reload]);
  const shown = resultsOnObjectives(pair, results, fetched.data);
  const x = objectiveInfo(pair[0], results.currency);
  const y = objectiveInfo(pair[1], results.currency);
  const select = (axis: 0 | 1, testid: string, label: string) => (
    <label>{label}{' '}
      <select data-testid={testid} value={pair[axis]} onChange={(e) => setWanted(chooseObjective(pair, axis, e.target.value as Objective))}>
        {available.map((o) => <option key={o} value={o}>{objectiveInfo(o, results.currency).name}</option>)}
      </select>
    </label>
  );
  return (
    <section aria-labelledby="pareto-title">
      <h2 id="pareto-title">{capitalised(x.name)} against {y.name}</h2>
      <form className="filters" aria-label="objectives of the Pareto plot" onSubmit={(e) => e.preventDefault()}>
        {select(0, 'objective-x', 'x')} {select(1, 'objective-y', 'y')}
      </form>
      {shown
        ? <ParetoPlot results={shown} name={name} />
        : fetched.error ? <p className="error">{fetched.error.message}</p> : <p>Loading the front on ({x.name}, {y.name})…</p>}
    </section>
  );
}

function capitalised(s: string): string {
  return s.length === 0 ? s : s[0]!.toUpperCase() + s.slice(1);
}
