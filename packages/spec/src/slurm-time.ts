import { z } from 'zod';
import { quoteForMessage } from './param-value';

// Slurm's accepted forms: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S. The leading field may be any size
// (Slurm reads "90" as 90 minutes); the fields after it are bounded like a clock, because Slurm
// would silently carry "1:75:00" over and the author probably meant something else.
const FORMS: ReadonlyArray<{ re: RegExp; toSeconds: (n: number[]) => number; bounded: number[] }> = [
  { re: /^(\d{1,9})$/, toSeconds: ([m = 0]) => m * 60, bounded: [] },
  { re: /^(\d{1,9}):(\d{1,2})$/, toSeconds: ([m = 0, s = 0]) => m * 60 + s, bounded: [1] },
  { re: /^(\d{1,9}):(\d{1,2}):(\d{1,2})$/, toSeconds: ([h = 0, m = 0, s = 0]) => h * 3600 + m * 60 + s, bounded: [1, 2] },
  { re: /^(\d{1,9})-(\d{1,2})$/, toSeconds: ([d = 0, h = 0]) => d * 86400 + h * 3600, bounded: [1] },
  { re: /^(\d{1,9})-(\d{1,2}):(\d{1,2})$/, toSeconds: ([d = 0, h = 0, m = 0]) => d * 86400 + h * 3600 + m * 60, bounded: [1, 2] },
  {
    re: /^(\d{1,9})-(\d{1,2}):(\d{1,2}):(\d{1,2})$/,
    toSeconds: ([d = 0, h = 0, m = 0, s = 0]) => d * 86400 + h * 3600 + m * 60 + s,
    bounded: [1, 2, 3],
  },
];

export class SlurmTimeError extends Error {
  readonly code = 'invalid_slurm_time';
  constructor(readonly input: string) {
    super(
      `${quoteForMessage(input)} is not a Slurm time; use minutes, MM:SS, HH:MM:SS or D-HH:MM:SS, e.g. "00:30:00"`,
    );
    this.name = 'SlurmTimeError';
  }
}

/**
 * Seconds in a Slurm time limit (`--time`). Throws SlurmTimeError for anything else, including
 * `UNLIMITED`/`INFINITE`: a campaign always states how long a run may take.
 */
export function parseSlurmTime(text: string): number {
  for (const form of FORMS) {
    const m = form.re.exec(text);
    if (!m) continue;
    const fields = m.slice(1).map(Number);
    // Hours after a day count up to 23; every other trailing field is minutes or seconds.
    const dayForm = text.includes('-');
    const inRange = form.bounded.every((i) => (fields[i] ?? 0) < (dayForm && i === 1 ? 24 : 60));
    if (!inRange) break;
    return form.toSeconds(fields);
  }
  throw new SlurmTimeError(text);
}

export function isSlurmTime(text: string): boolean {
  try {
    parseSlurmTime(text);
    return true;
  } catch {
    return false;
  }
}

/** A positive Slurm time limit; zero is refused because Slurm reads `--time=0` as "no limit". */
export const SlurmTime = z.string().check((ctx) => {
  let seconds: number;
  try {
    seconds = parseSlurmTime(ctx.value);
  } catch (err) {
    ctx.issues.push({ code: 'custom', input: ctx.value, message: (err as Error).message, params: { code: 'invalid_slurm_time' } });
    return;
  }
  if (seconds === 0) {
    ctx.issues.push({
      code: 'custom',
      input: ctx.value,
      message: `${quoteForMessage(ctx.value)} is zero, which Slurm reads as "no time limit"; give a positive time, e.g. "00:30:00"`,
      params: { code: 'invalid_slurm_time' },
    });
  }
});
