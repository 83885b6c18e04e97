import { z } from 'zod';
import { quoteForMessage } from './param-value';
import { ErgError } from './errors';

// Slurm's forms: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S. The leading field may be any size (Slurm
// reads "90" as 90 minutes); the fields after it are bounded like a clock, because Slurm would
// silently carry "1:75:00" over and the author more likely made a typo.
const SLURM_TIME = /^(?:(\d{1,9})-)?(\d{1,9})(?::(\d{1,2}))?(?::(\d{1,2}))?$/;

export class SlurmTimeError extends ErgError<'invalid_slurm_time'> {
  constructor(readonly input: string) {
    super('invalid_slurm_time', `${quoteForMessage(input)} is not a Slurm time; use minutes, MM:SS, HH:MM:SS or D-HH:MM:SS, e.g. "00:30:00"`);
  }
}

/**
 * Seconds in a Slurm time limit (`--time`). Throws SlurmTimeError for anything else, including
 * `UNLIMITED`/`INFINITE`: a campaign always states how long a run may take.
 */
export function parseSlurmTime(text: string): number {
  const m = SLURM_TIME.exec(text);
  if (!m) throw new SlurmTimeError(text);
  const [d, a = 0, b, c] = m.slice(1).map((f) => (f === undefined ? undefined : Number(f)));
  const [days, hours, minutes, seconds] =
    d !== undefined ? [d, a, b ?? 0, c ?? 0] : c !== undefined ? [0, a, b ?? 0, c] : [0, 0, a, b ?? 0];
  const minutesLead = d === undefined && c === undefined;
  if ((d !== undefined && hours >= 24) || (!minutesLead && minutes >= 60) || seconds >= 60) throw new SlurmTimeError(text);
  return days * 86400 + hours * 3600 + minutes * 60 + seconds;
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
export const SlurmTime = z.string().superRefine((text, ctx) => {
  let seconds: number;
  try {
    seconds = parseSlurmTime(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message, params: { code: 'invalid_slurm_time' } });
    return;
  }
  if (seconds === 0) {
    ctx.addIssue({
      code: 'custom',
      message: `${quoteForMessage(text)} is zero, which Slurm reads as "no time limit"; give a positive time, e.g. "00:30:00"`,
      params: { code: 'invalid_slurm_time' },
    });
  }
});
