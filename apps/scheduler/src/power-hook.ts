import type { ClusterRecord } from '@erg/db';
import { shellQuote, type PowerHook } from '@erg/slurm';
import { expandPower, powerRequestText, powerStartLines, powerStopLines, powerSupport, type CampaignSpec, type ParamValue } from '@erg/spec';

/**
 * The lines job.sh runs to put every node of a run in its configuration's power state, and to
 * restore it (@erg/spec's run-dir owns them): the cluster's helper, shell-quoted, and numbers
 * that expandPower checked. Undefined when the campaign sets no power state. Throws with a
 * reason for the run when the state cannot be set here (the helper went away since the campaign
 * was accepted) — a run never starts at a state it did not ask for.
 */
export function powerHook(cluster: ClusterRecord, spec: CampaignSpec, configKey: string, parameters: Readonly<Record<string, ParamValue>>): PowerHook | undefined {
  if (!spec.power) return undefined;
  const { state, issues } = expandPower(spec.power, configKey, parameters);
  if (issues.length > 0) throw new Error(issues.map((i) => `${i.path}: ${i.message}`).join('; '));
  const support = powerSupport(cluster, state);
  if (!support.ok) throw new Error(`${support.message}; the run was not started at another state instead`);
  return { start: powerStartLines(shellQuote(cluster.powerHelper), state), stop: powerStopLines(), request: powerRequestText(state) };
}
