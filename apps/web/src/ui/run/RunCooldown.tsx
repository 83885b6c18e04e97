// The run's cooldown (the spec's cooldown block): how long its job waited for its nodes to be
// back near idle before the idle baseline and the workload, and what each node was compared with.
import { cooldownLines } from '../../run-info';
import type { Run } from '../../types';

export function RunCooldownSection({ run }: { run: Run }) {
  const lines = cooldownLines(run);
  if (!lines) return null;
  return (
    <section aria-labelledby="cooldown-title" data-testid="run-cooldown">
      <h2 id="cooldown-title">Cooldown</h2>
      <p className={lines.reached ? '' : 'warning'}>{lines.summary}</p>
      <ul>
        {lines.nodes.map((n) => <li key={n.node} className={n.reached ? '' : 'warning'}>{n.text}</li>)}
      </ul>
    </section>
  );
}
