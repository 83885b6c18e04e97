import { randomBytes } from 'node:crypto';

/** A short name unique to this test run, for queue prefixes, databases and Slurm job names. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}
