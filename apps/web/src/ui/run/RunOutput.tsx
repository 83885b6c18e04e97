// The stdout and stderr tails of a run, where erg read them (live from the cluster or stored).
import type { RunLogs } from '../../types';

export function RunOutput({ logs }: { logs: { data: RunLogs | null; error: Error | null; reload: () => void } }) {
  return (
    <section aria-labelledby="logs-title">
      <h2 id="logs-title">Output {logs.data && <span className="small">({logs.data.source}{logs.data.truncated ? ', tail' : ''})</span>}</h2>
      <button type="button" onClick={() => logs.reload()}>Refresh</button>
      {logs.error && <p className="error">{logs.error.message}</p>}
      <div className="logs">
        <div><h3>stdout</h3><pre data-testid="stdout">{logs.data?.stdout || '(empty)'}</pre></div>
        <div><h3>stderr</h3><pre data-testid="stderr">{logs.data?.stderr || '(empty)'}</pre></div>
      </div>
    </section>
  );
}
