// The pure part of `erg watch`: how far a campaign is, when it will likely end, and the line that
// says so. Polling and drawing live in commands/watch.ts.
import { RunState, TERMINAL_CAMPAIGN_STATES, TERMINAL_RUN_STATES } from '@erg/spec';
import type { Campaign } from '@erg/client';
import type { CampaignDecisions } from '../api-types';
import type { Colors } from '../output/color';
import { formatElapsed, formatPercent } from '@erg/format';

/** Campaign states that no longer change. */
export const FINAL_CAMPAIGN_STATES: readonly Campaign['state'][] = TERMINAL_CAMPAIGN_STATES;

export function isFinal(state: Campaign['state']): boolean {
  return FINAL_CAMPAIGN_STATES.includes(state);
}

/** Runs that have finished, whatever the outcome (completed, failed, cancelled, timeout, node_fail, oom). */
export function doneRuns(runCounts: Record<string, number>): number {
  return TERMINAL_RUN_STATES.reduce((sum, state) => sum + (runCounts[state] ?? 0), 0);
}

/** "completed 4, failed 1, running 2": the non-zero counts in lifecycle order. */
export function countsText(runCounts: Record<string, number>, color?: Colors): string {
  const paint = (state: string, text: string) => {
    if (!color) return text;
    if (state === 'completed') return color.green(text);
    if (state === 'cancelled') return color.yellow(text);
    if ((TERMINAL_RUN_STATES as readonly string[]).includes(state)) return color.red(text);
    return state === 'running' || state === 'completing' ? color.cyan(text) : text;
  };
  const known = RunState.options.filter((s) => (runCounts[s] ?? 0) > 0);
  const unknown = Object.keys(runCounts).filter((s) => !(RunState.options as readonly string[]).includes(s) && (runCounts[s] ?? 0) > 0);
  return [...known, ...unknown].map((s) => paint(s, `${s} ${runCounts[s]}`)).join(', ');
}

/**
 * Estimates the time left from observed throughput (finished runs per second). While runs keep
 * finishing during the watch, the rate since the first poll is used: it reflects the cluster as
 * it is now. Before that, the campaign's whole history is used (runs finished since createdAt),
 * so attaching to a half-done campaign gives an estimate at once. No run finished: no estimate.
 */
export class EtaEstimator {
  private first: { atMs: number; done: number } | null = null;

  constructor(private readonly createdAtMs: number) {}

  /** Seconds left, or null while there is nothing to estimate from. */
  observe(nowMs: number, done: number, total: number): number | null {
    this.first ??= { atMs: nowMs, done };
    if (done >= total) return 0;
    if (done === 0) return null;
    const sinceFirst = done - this.first.done;
    const rate =
      sinceFirst > 0 && nowMs > this.first.atMs
        ? sinceFirst / ((nowMs - this.first.atMs) / 1000)
        : done / (Math.max(1, nowMs - this.createdAtMs) / 1000);
    return rate > 0 ? (total - done) / rate : null;
  }
}

export interface Progress {
  done: number;
  total: number;
  runCounts: Record<string, number>;
  elapsedS: number;
  etaS: number | null;
  /** An adaptive campaign's decisions in words (strategyText); absent for a grid. */
  strategy?: string;
}

/** A bar of `width` cells, filled in proportion to done/total. */
export function progressBar(done: number, total: number, width: number): string {
  const filled = total === 0 ? width : Math.min(width, Math.floor((done / total) * width));
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}

/** "5/8 runs done (62.5 %) · completed 4, failed 1, running 2, queued 1 · elapsed 42 s · ETA 25 s". */
/**
 * An adaptive campaign's decisions in a few words: what is undecided and the runs used against the
 * grid, or why it stopped; a search's: runs in flight, configurations tried and on the front.
 */
export function strategyText(d: Pick<CampaignDecisions, 'open' | 'stop' | 'undecided' | 'runsUsed' | 'gridRuns' | 'decisions'> & { strategy?: { kind: string } }): string {
  if (d.strategy?.kind === 'search') {
    const front = d.decisions.filter((x) => x.status === 'front').length;
    const head = d.open ? `search: ${d.undecided.length} in flight` : `search: ${d.stop ?? 'stopped'}`;
    return `${head}, ${d.decisions.length} tried, ${front} on the front, ${d.runsUsed} of the space's ${d.gridRuns} runs`;
  }
  const dropped = d.decisions.filter((x) => x.status === 'dropped').length;
  const head = d.open ? `adaptive: ${d.undecided.length} undecided` : `adaptive: ${d.stop ?? 'stopped'}`;
  return `${head}, ${dropped} dropped, ${d.runsUsed} of the grid's ${d.gridRuns} runs`;
}

export function progressText(p: Progress, color?: Colors): string {
  const share = p.total === 0 ? 1 : p.done / p.total;
  // An adaptive campaign's total grows as its strategy adds runs: no ETA for what is not planned yet.
  const eta = p.done >= p.total || p.strategy !== undefined ? null : p.etaS === null ? 'ETA: estimating' : `ETA ${formatElapsed(p.etaS)}`;
  return [`${p.done}/${p.total} runs done (${formatPercent(share)})`, countsText(p.runCounts, color), `elapsed ${formatElapsed(p.elapsedS)}`, eta, p.strategy ?? null]
    .filter((part) => part !== null && part !== '')
    .join(' · ');
}
