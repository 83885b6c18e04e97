// Fractions as the claims' and node effects' sentences print them.

/** A fraction as a percentage with two or three significant figures: "95 %", "12 %", "1.5 %", "0.32 %". */
export function percent(x: number): string {
  const v = 100 * x;
  const digits = Math.abs(v) >= 10 || v === 0 ? 0 : Math.abs(v) >= 1 ? 1 : 2;
  return `${Number(v.toFixed(digits))} %`;
}

/** A confidence or error level as a percentage, to four significant figures: "95 %", "99.5 %", "0.1 %". */
export function level(x: number): string {
  return `${Number((100 * x).toPrecision(4))} %`;
}
