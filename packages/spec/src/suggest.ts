/** The candidate closest to a misspelt word, when one is close enough to be a likely typo. */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  const threshold = Math.max(1, Math.min(3, Math.floor(word.length / 3)));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    // The distance is at least the difference in length: skip the quadratic comparison (a
    // hostile key may be a megabyte long).
    if (Math.abs(word.length - candidate.length) > threshold) continue;
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d <= threshold && d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance where swapping two neighbours counts as one edit ("slrum" → "slurm"). */
function editDistance(a: string, b: string): number {
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      let d = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (beforePrevious[j - 2] ?? 0) + 1);
      current.push(d);
    }
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length] ?? 0;
}
