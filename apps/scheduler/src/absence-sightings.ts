/**
 * Runs in doubt that Slurm did not list, remembered between the reconciles of this process.
 *
 * A run in doubt is submitted again only after two reconciles found no job for it, the second
 * asked after the first was answered. Why one is not enough: a hung slurmctld carries out the
 * sbatch requests waiting in its socket when it wakes up, on their own threads, side by side with
 * the first squeue it answers — so that squeue may miss a job being created at that moment. A
 * squeue sent after that answer came back finds it (slurmctld creates a job within milliseconds
 * once it runs). Two sightings cost a run in doubt one poll interval more; a process that restarts
 * forgets its sightings and starts counting again, which only ever delays.
 */
export class AbsenceSightings {
  /** cluster id → run id → when the reconcile that first found the run absent was answered. */
  private readonly firstAbsent = new Map<string, Map<string, number>>();

  /**
   * Records the runs one reconcile found absent and returns those an earlier reconcile, answered
   * before this one asked (`askedAt`), found absent too. Runs of the cluster that are no longer
   * absent are forgotten.
   */
  confirm(clusterId: string, absent: readonly string[], askedAt: number, answeredAt: number): string[] {
    const before = this.firstAbsent.get(clusterId) ?? new Map<string, number>();
    const now = new Map<string, number>();
    const confirmed: string[] = [];
    for (const runId of absent) {
      const first = before.get(runId);
      if (first !== undefined && first < askedAt) confirmed.push(runId);
      else now.set(runId, first ?? answeredAt);
    }
    if (now.size > 0) this.firstAbsent.set(clusterId, now);
    else this.firstAbsent.delete(clusterId);
    return confirmed;
  }
}
