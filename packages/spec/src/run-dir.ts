/**
 * The names erg itself uses in a run directory: what job.sh writes (the workload's output, its
 * timing, the idle baseline), what Slurm writes for it, the run token the scheduler stages for the
 * agents, and the folder the agents spool telemetry into. One list: the spec refuses these names
 * (and everything under the `erg.` and `slurm.` prefixes) in a campaign's `files`, and the job
 * renderer writes its files by them — a staged file can never overwrite or shadow one of erg's.
 */
export const RUN_DIR_FILES = {
  jobScript: 'job.sh',
  runScript: 'run.sh',
  stdout: 'stdout.log',
  stderr: 'stderr.log',
  slurmOut: 'slurm.out',
  slurmErr: 'slurm.err',
  timing: 'erg.timing',
  timingTmp: 'erg.timing.tmp',
  idle: 'erg.idle',
  runToken: 'erg.token',
  /** A folder: `<node>.spool`, `<node>.ready` and `agent.log` of the telemetry agents. */
  telemetryDir: 'telemetry',
} as const;
