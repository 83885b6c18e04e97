/**
 * One node's phase marks as a timeline: the window cut into segments, each labelled by the phase
 * innermost open in it (its leaf label; null: no phase open, "unmarked"), with every phase open
 * in it; how many times each phase occurred; and the node's step marks. Marks that do not pair
 * up are repaired or ignored with a warning rather than rejected: a workload's bug (an exception
 * skipping an `end`) must not cost the run its figures. Internal to @erg/energy.
 */
import type { BatchMark } from '@erg/spec';
import type { Window } from './telemetry';

/** A mark as the energy math sees it: on one node, at `t` Unix ms on the samples' timeline. */
export type PhaseMarkInput = Pick<BatchMark, 'kind' | 'name' | 't'> & { node: string };

/** A leaf label: a phase's name, or null for time inside no phase. */
export type Label = string | null;

/** A stretch of the window with one set of open phases. */
export interface Segment {
  fromMs: number;
  toMs: number;
  /** The innermost open phase; null when none is open. */
  leaf: Label;
  /** The distinct names of the open phases, outermost first (a phase nested in itself appears once). */
  open: readonly string[];
}

export interface NodeTimeline {
  /** Segments of positive length that partition the window, in time order. */
  segments: Segment[];
  /** Per phase name, its begin/end pairs that overlap the window. */
  occurrences: Map<string, number>;
  /** Per step counter name, its step marks' times inside the window, in time order. */
  steps: Map<string, number[]>;
  warnings: string[];
}

/** An open phase on the stack. */
interface Open {
  name: string;
  beganMs: number;
}

/**
 * The timeline of one node's marks (any order; equal times keep their given order, the order
 * they were written in) over `window`:
 * - `begin` opens a phase and `end` closes the innermost open phase of that name; phases nest.
 * - An `end` closing a phase that has phases begun inside it still open closes those too (they
 *   cannot outlive it), with a warning.
 * - An `end` with no open phase of its name is ignored, with a warning.
 * - A phase still open after the last mark is closed at the window's end, with a warning.
 * - Everything is clipped to the window; marks with a non-finite time are ignored, with a warning.
 */
export function nodeTimeline(node: string, marks: readonly PhaseMarkInput[], window: Window): NodeTimeline {
  const { startMs, endMs } = window;
  const problems = new Problems(node);
  const timeline: NodeTimeline = { segments: [], occurrences: new Map(), steps: new Map(), warnings: [] };
  const usable: PhaseMarkInput[] = [];
  for (const m of marks) {
    if (Number.isFinite(m.t)) usable.push(m);
    else problems.count('marks with a non-finite time ignored', m);
  }
  // Array.prototype.sort is stable: marks at the same time stay in the order they were written.
  usable.sort((a, b) => a.t - b.t);

  const stack: Open[] = [];
  // The open phases' distinct names, kept as the stack changes (not rebuilt per segment).
  let openNames: string[] = [];
  // Begins ignored beyond MAX_PHASE_DEPTH, per name: the ends that match them are ignored too.
  const ignored = new Map<string, number>();
  let cursor = startMs;
  const advanceTo = (t: number) => {
    const to = Math.min(Math.max(t, startMs), endMs);
    if (to <= cursor) return;
    timeline.segments.push({ fromMs: cursor, toMs: to, leaf: stack.at(-1)?.name ?? null, open: openNames });
    cursor = to;
  };
  const close = (open: Open, atMs: number) => {
    if (open.beganMs <= endMs && atMs >= startMs) timeline.occurrences.set(open.name, (timeline.occurrences.get(open.name) ?? 0) + 1);
  };

  for (const mark of usable) {
    advanceTo(mark.t);
    if (mark.kind === 'begin') {
      if (stack.length >= MAX_PHASE_DEPTH) {
        problems.count(`phases begun more than ${MAX_PHASE_DEPTH} deep ignored (with their ends)`, mark);
        ignored.set(mark.name, (ignored.get(mark.name) ?? 0) + 1);
        continue;
      }
      stack.push({ name: mark.name, beganMs: mark.t });
      openNames = distinctNames(stack);
    } else if (mark.kind === 'end') {
      const skipped = ignored.get(mark.name) ?? 0;
      if (skipped > 0) {
        ignored.set(mark.name, skipped - 1);
        continue;
      }
      const at = lastIndexOfName(stack, mark.name);
      if (at < 0) {
        problems.count('`end` marks without a matching `begin` ignored', mark);
        continue;
      }
      while (stack.length > at + 1) {
        const inner = stack.pop()!;
        problems.count('phases still open when the phase they were begun in ended, closed there', { ...mark, name: inner.name });
        close(inner, mark.t);
      }
      close(stack.pop()!, mark.t);
      openNames = distinctNames(stack);
    } else if (mark.t >= startMs && mark.t <= endMs) {
      const times = timeline.steps.get(mark.name) ?? [];
      times.push(mark.t);
      timeline.steps.set(mark.name, times);
    }
  }
  advanceTo(endMs);
  while (stack.length > 0) {
    const open = stack.pop()!;
    problems.count('phases never ended, closed at the window’s end', { name: open.name, t: open.beganMs });
    close(open, endMs);
  }
  timeline.warnings = problems.warnings();
  return timeline;
}

/**
 * Deepest nesting of phases a timeline follows. Real workloads nest a handful deep (epoch › step ›
 * forward › a layer); a begin without its end in a loop would otherwise grow the stack with every
 * iteration, and the work per mark with it.
 */
export const MAX_PHASE_DEPTH = 32;

function lastIndexOfName(stack: readonly Open[], name: string): number {
  for (let i = stack.length - 1; i >= 0; i--) if (stack[i]!.name === name) return i;
  return -1;
}

function distinctNames(stack: readonly Open[]): string[] {
  const names: string[] = [];
  for (const o of stack) if (!names.includes(o.name)) names.push(o.name);
  return names;
}

/** At most this many phase names are listed in one warning. */
const NAMES_PER_WARNING = 5;

/** Mark problems counted by kind, so that a million unmatched marks make one warning, not a million. */
class Problems {
  private readonly byWhat = new Map<string, { n: number; names: Set<string>; firstMs: number }>();
  constructor(private readonly node: string) {}

  count(what: string, mark: { name: string; t: number }): void {
    const p = this.byWhat.get(what) ?? { n: 0, names: new Set<string>(), firstMs: mark.t };
    p.n += 1;
    if (p.names.size < NAMES_PER_WARNING) p.names.add(mark.name);
    this.byWhat.set(what, p);
  }

  warnings(): string[] {
    return [...this.byWhat].map(([what, p]) => {
      const names = [...p.names].join(', ') + (p.n > p.names.size ? ', …' : '');
      const first = Number.isFinite(p.firstMs) ? `; first at ${p.firstMs} ms` : '';
      return `${this.node}: ${what}: ${p.n} (${names}${first})`;
    });
  }
}
