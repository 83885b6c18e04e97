// The fills that tell states, components and phases apart without colour: each index has its own
// shade and its own white marks on it. One definition for the three places that draw them: the
// SVG charts (<pattern> elements, so exports carry them), the power trace on uPlot's canvas and
// the power trace's SVG export.

/** A white mark on a fill, in an 8 × 8 tile: a path stroked `stroke` px wide, or filled when no width is given. */
export interface PatternMark {
  d: string;
  stroke?: number;
}

export interface PatternSpec {
  shade: string;
  marks: readonly PatternMark[];
}

export const PATTERN_TILE = 8;

export const PATTERNS: readonly PatternSpec[] = [
  { shade: '#4c72b0', marks: [] },
  { shade: '#dd8452', marks: [{ d: 'M0,8 L8,0', stroke: 1.5 }] },
  { shade: '#55a868', marks: [{ d: 'M2.4,4 a1.6,1.6 0 1,0 3.2,0 a1.6,1.6 0 1,0 -3.2,0 Z' }] },
  { shade: '#c44e52', marks: [{ d: 'M0,4 L8,4', stroke: 1.5 }] },
  { shade: '#8172b3', marks: [{ d: 'M0,0 L8,8 M0,8 L8,0', stroke: 1 }] },
  { shade: '#937860', marks: [{ d: 'M4,0 L4,8', stroke: 1.5 }] },
  { shade: '#da8bc3', marks: [{ d: 'M0,0 L8,8', stroke: 1.5 }] },
  { shade: '#8c8c8c', marks: [{ d: 'M2,2 h4 v4 h-4 Z' }] },
];

export const PATTERN_COUNT = PATTERNS.length;

export function patternSpec(index: number): PatternSpec {
  return PATTERNS[((index % PATTERN_COUNT) + PATTERN_COUNT) % PATTERN_COUNT]!;
}

/** A <pattern> element as SVG text (for SVG documents built as strings). */
export function patternSvg(id: string, index: number, opacity = 1): string {
  const p = patternSpec(index);
  const marks = p.marks
    .map((m) => (m.stroke === undefined ? `<path d="${m.d}" fill="white"/>` : `<path d="${m.d}" stroke="white" stroke-width="${m.stroke}" fill="none"/>`))
    .join('');
  return `<pattern id="${id}" width="${PATTERN_TILE}" height="${PATTERN_TILE}" patternUnits="userSpaceOnUse"><g opacity="${opacity}"><rect width="${PATTERN_TILE}" height="${PATTERN_TILE}" fill="${p.shade}"/>${marks}</g></pattern>`;
}
