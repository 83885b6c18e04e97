// A run's cooldown (the spec's `cooldown` block: GET /v1/runs/:id's `cooldown`), as `erg run` and
// the web app's run page show it: how long the job waited before its idle baseline and workload,
// whether every node came back near idle, and what each node was compared with. Typed by the
// fields it reads, like provenance.ts.
import { formatPower, formatTime, NO_VALUE } from './units';

export interface CooldownNodeFields {
  node: string;
  waitedS: number;
  reached: boolean;
  criterion: 'idle_baseline' | 'settled';
  powerW: number | null;
  referenceW: number | null;
  maxGpuTempC: number | null;
  referenceTempC: number | null;
}

export interface CooldownFields {
  waitedS: number;
  reached: boolean;
  nodes: readonly CooldownNodeFields[];
}

/** What a run without a cooldown shows. */
export const NO_COOLDOWN = 'none (the campaign sets no cooldown)';

/** `waited 8.2 s; every node cooled` — or that not every node had, and the workload ran all the same. */
export function cooldownSummary(c: CooldownFields): string {
  const outcome = c.reached ? 'every node cooled' : 'not every node cooled before maxWaitS: the workload ran all the same';
  return `waited ${formatTime(c.waitedS)} before the idle baseline and the workload (not in its time); ${outcome}`;
}

function celsius(x: number | null): string {
  return x === null ? NO_VALUE : `${x.toFixed(1)} °C`;
}

/** One node: `gh-001: cooled in 6.1 s — 118 W vs idle 112 W; hottest GPU 41.0 °C vs idle 38.0 °C`. */
export function cooldownNodeText(n: CooldownNodeFields): string {
  const outcome = n.reached ? `cooled in ${formatTime(n.waitedS)}` : `not cooled after ${formatTime(n.waitedS)}`;
  const power = n.powerW === null ? 'power unknown' : formatPower(n.powerW);
  const compared =
    n.criterion === 'idle_baseline'
      ? `${power} vs idle ${n.referenceW === null ? NO_VALUE : formatPower(n.referenceW)}`
      : `${power}, settled (no idle baseline measured on this node yet)`;
  const gpus = n.maxGpuTempC === null ? '' : `; hottest GPU ${celsius(n.maxGpuTempC)}${n.referenceTempC === null ? '' : ` vs idle ${celsius(n.referenceTempC)}`}`;
  return `${n.node}: ${outcome} — ${compared}${gpus}`;
}
