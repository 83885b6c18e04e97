import { siteLimitReason } from '../src/submit';
import { SubmitLimits } from '../src/submit-limits';

const QOS = "sbatch: error: QOSMaxSubmitJobPerUserLimit\nsbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)";

describe('submitting under site limits', () => {
  test('a refusal halves what the next batch may claim and holds submission back for a while', () => {
    const limits = new SubmitLimits();
    expect(limits.allowance('c')).toBe(Infinity);
    limits.refused('c', 50, QOS, 1_000);
    expect(limits.allowance('c')).toBe(25);
    expect(limits.heldBack('c', 1_001)).toBe(QOS);
    expect(limits.heldBack('c', 1_000 + 3_001)).toBeNull(); // 2 s ± jitter
    limits.refused('c', 25, QOS, 10_000);
    limits.refused('c', 12, QOS, 20_000);
    expect(limits.allowance('c')).toBe(6);
    expect(limits.heldBack('other', 20_001)).toBeNull();
  });

  test('the hold doubles with every refusal in a row, and a run ending lifts it at once', () => {
    const limits = new SubmitLimits();
    for (let i = 0; i < 4; i++) limits.refused('c', 1, QOS, 0);
    expect(limits.allowance('c')).toBe(1);
    expect(limits.heldBack('c', 7_000)).toBe(QOS); // 16 s ± jitter after the fourth
    limits.ended('c');
    expect(limits.heldBack('c', 7_000)).toBeNull();
  });

  test('accepted submissions double the allowance until it limits nothing', () => {
    const limits = new SubmitLimits();
    limits.refused('c', 8, QOS, 0);
    expect(limits.allowance('c')).toBe(4);
    limits.accepted('c');
    expect(limits.allowance('c')).toBe(8);
    for (let i = 0; i < 20; i++) limits.accepted('c');
    expect(limits.allowance('c')).toBe(Infinity);
  });

  test('the waiting runs say which limit, in Slurm\'s words, and what erg does next', () => {
    expect(siteLimitReason(QOS)).toBe(
      "waiting: the site's Slurm limit QOSMaxSubmitJobPerUserLimit refused more jobs (QOSMaxSubmitJobPerUserLimit sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)); erg submits more, fewer at a time, as earlier jobs end",
    );
  });
});
