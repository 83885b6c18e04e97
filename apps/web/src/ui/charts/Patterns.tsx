// Fill patterns so that states, components and phases read without colour (patterns.ts): each
// index has its own marks as well as its own shade. Used inside the SVG charts (so exports carry them).
import { PATTERN_TILE, PATTERNS, PATTERN_COUNT } from '../../patterns';

export { PATTERN_COUNT };

export function patternId(prefix: string, i: number): string {
  return `${prefix}-pat-${i % PATTERN_COUNT}`;
}

export function PatternDefs({ prefix }: { prefix: string }) {
  return (
    <defs>
      {PATTERNS.map((p, i) => (
        <pattern key={i} id={patternId(prefix, i)} width={PATTERN_TILE} height={PATTERN_TILE} patternUnits="userSpaceOnUse">
          <rect width={PATTERN_TILE} height={PATTERN_TILE} fill={p.shade} />
          {p.marks.map((m, j) => (m.stroke === undefined ? <path key={j} d={m.d} fill="white" /> : <path key={j} d={m.d} stroke="white" strokeWidth={m.stroke} fill="none" />))}
        </pattern>
      ))}
    </defs>
  );
}
