// Fill patterns so that states and components read without colour: each index has its own
// hatching as well as its own shade. Used inside the SVG charts (so exports carry them).
export const PATTERN_COUNT = 8;

const SHADES = ['#4c72b0', '#dd8452', '#55a868', '#c44e52', '#8172b3', '#937860', '#da8bc3', '#8c8c8c'];

export function patternId(prefix: string, i: number): string {
  return `${prefix}-pat-${i % PATTERN_COUNT}`;
}

export function PatternDefs({ prefix }: { prefix: string }) {
  return (
    <defs>
      {SHADES.map((shade, i) => (
        <pattern key={i} id={patternId(prefix, i)} width="8" height="8" patternUnits="userSpaceOnUse">
          <rect width="8" height="8" fill={shade} />
          {i === 1 && <path d="M0,8 L8,0" stroke="white" strokeWidth="1.5" />}
          {i === 2 && <circle cx="4" cy="4" r="1.6" fill="white" />}
          {i === 3 && <path d="M0,4 L8,4" stroke="white" strokeWidth="1.5" />}
          {i === 4 && <path d="M0,0 L8,8 M0,8 L8,0" stroke="white" strokeWidth="1" />}
          {i === 5 && <path d="M4,0 L4,8" stroke="white" strokeWidth="1.5" />}
          {i === 6 && <path d="M0,0 L8,8" stroke="white" strokeWidth="1.5" />}
          {i === 7 && <rect x="2" y="2" width="4" height="4" fill="white" />}
        </pattern>
      ))}
    </defs>
  );
}
