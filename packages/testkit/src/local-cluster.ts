import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** What deploy/local-slurm/up.sh writes to .erg/local-slurm/cluster.json. */
export interface LocalCluster {
  name: string;
  host: string;
  port: number;
  user: string;
  privateKeyPath: string;
  privateKey: string;
  hostKeySha256: string;
  partition: string;
  workDir: string;
  slurmClusterName: string;
  /** The same sshd's second port, where sbatch waits a few seconds before submitting (fault tests). */
  slowSbatchPort: number;
}

/** The repository root: the nearest ancestor folder holding turbo.json. */
export function repoRoot(start: string = __dirname): string {
  let dir = start;
  while (!existsSync(path.join(dir, 'turbo.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no turbo.json above ${start}`);
    dir = parent;
  }
  return dir;
}

/**
 * Reads the local cluster's connection facts. The e2e suite is started by scripts/test.sh, which
 * runs deploy/local-slurm/up.sh first; a missing file means that step did not run.
 */
export function loadLocalCluster(): LocalCluster {
  const file = path.join(repoRoot(), '.erg', 'local-slurm', 'cluster.json');
  if (!existsSync(file)) {
    throw new Error(`${file} not found: run deploy/local-slurm/up.sh first (scripts/test.sh does)`);
  }
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Omit<LocalCluster, 'privateKey'>;
  return { ...raw, privateKey: readFileSync(raw.privateKeyPath, 'utf8') };
}
