import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The local clusters deploy/local-slurm brings up: `up.sh` (22.05, on the machine), `up.sh --slurm
 * 24.11` (in a Debian 13 root) and `up.sh --multinode` (Slurm 22.05 with four nodes gh-[001-004],
 * each in network namespaces of its own: docs/local-cluster.md).
 */
export const LOCAL_CLUSTER_SERIES = ['22.05', '24.11', 'multinode'] as const;
export type LocalClusterSeries = (typeof LOCAL_CLUSTER_SERIES)[number];

/** What deploy/local-slurm/up.sh (or `up.sh --slurm 24.11`) writes to .erg/local-slurm[-24.11]/cluster.json. */
export interface LocalCluster {
  name: string;
  host: string;
  port: number;
  user: string;
  privateKeyPath: string;
  privateKey: string;
  hostKeySha256: string;
  partition: string;
  /** A path on the cluster (clusterHostPath gives where it is on this machine). */
  workDir: string;
  slurmClusterName: string;
  /** The same sshd's second port, where sbatch waits a few seconds before submitting (fault tests); the multi-node cluster has none. */
  slowSbatchPort?: number;
  /** Which of the local clusters this is. */
  slurmSeries: LocalClusterSeries;
  /** What `sinfo --version` prints on the cluster, e.g. "slurm-wlm 24.11.5". */
  slurmVersion: string;
  /** The cluster's root directory on this machine: "/" for 22.05, the Debian 13 root for 24.11. A cluster path P is rootDir + P here. */
  rootDir: string;
  /** Host path of the pid file of erg's sshd (the chaos suite restarts it). */
  sshdPidFile: string;
  /** How up.sh starts erg's sshd (argv; it daemonizes). */
  sshdStartCommand: string[];
  /** Host path of slurmctld's pid file. */
  slurmctldPidFile: string;
  /** The arguments of deploy/local-slurm/up.sh that bring this cluster up (none for 22.05). */
  upArgs: string[];
  /** The multi-node cluster's compute nodes and their addresses (absent on the single-node clusters). */
  nodes?: { name: string; address: string }[];
  /** Where the multi-node cluster's nodes reach this machine (their 127.0.0.1 is their own): the host of an agentApiUrl. */
  nodeHostAddress?: string;
  /** The multi-node cluster's nodes' own files on this machine: `<nodesDir>/<node>/sys/class/hwmon` is a node's fixture power meters. */
  nodesDir?: string;
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

/** The cluster the e2e tests run against: env ERG_E2E_SLURM (`22.05`, the default, or `24.11`). */
export function localClusterSeries(env: NodeJS.ProcessEnv = process.env): LocalClusterSeries {
  const value = env.ERG_E2E_SLURM?.trim() || '22.05';
  if (!(LOCAL_CLUSTER_SERIES as readonly string[]).includes(value)) {
    throw new Error(`ERG_E2E_SLURM=${JSON.stringify(env.ERG_E2E_SLURM)}: expected one of ${LOCAL_CLUSTER_SERIES.join(', ')}`);
  }
  return value as LocalClusterSeries;
}

/** Where up.sh copies a local cluster's cluster.json in this checkout. */
export function localClusterFile(series: LocalClusterSeries = localClusterSeries()): string {
  return path.join(repoRoot(), '.erg', series === '22.05' ? 'local-slurm' : `local-slurm-${series}`, 'cluster.json');
}

/** deploy/local-slurm/up.sh's arguments for a series. */
function upCommand(series: LocalClusterSeries): string {
  return `bash deploy/local-slurm/up.sh${series === '22.05' ? '' : series === 'multinode' ? ' --multinode' : ` --slurm ${series}`}`;
}

/**
 * Reads a local cluster's connection facts: the one ERG_E2E_SLURM names unless `series` says
 * otherwise. The e2e suite is started by scripts/test.sh, which brings both clusters up first;
 * a missing file means that step did not run for this cluster.
 */
export function loadLocalCluster(series: LocalClusterSeries = localClusterSeries()): LocalCluster {
  const file = localClusterFile(series);
  if (!existsSync(file)) {
    throw new Error(`${file} not found: the Slurm ${series} local cluster is not up — run ${upCommand(series)} as root first (scripts/test.sh does)`);
  }
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Omit<LocalCluster, 'privateKey'>;
  if (typeof raw.rootDir !== 'string' || !Array.isArray(raw.upArgs) || raw.slurmSeries !== series) {
    throw new Error(`${file} was written by an older deploy/local-slurm (no rootDir/upArgs, or not the ${series} cluster): run ${upCommand(series)} again`);
  }
  return { ...raw, privateKey: readFileSync(raw.privateKeyPath, 'utf8') };
}

/** Where a path on the cluster (absolute, e.g. under workDir) is on this machine: rootDir + path. */
export function clusterHostPath(cluster: Pick<LocalCluster, 'rootDir'>, clusterPath: string): string {
  if (!path.isAbsolute(clusterPath)) throw new Error(`not an absolute cluster path: ${clusterPath}`);
  return cluster.rootDir === '/' ? clusterPath : path.join(cluster.rootDir, clusterPath);
}

/** The cluster's name for a path on this machine inside the cluster's root (the inverse of clusterHostPath). */
export function hostClusterPath(cluster: Pick<LocalCluster, 'rootDir'>, hostPath: string): string {
  const resolved = path.resolve(hostPath);
  if (cluster.rootDir === '/') return resolved;
  const root = path.resolve(cluster.rootDir);
  if (resolved === root) return '/';
  if (!resolved.startsWith(`${root}/`)) throw new Error(`${hostPath} is outside the cluster's root ${cluster.rootDir}`);
  return resolved.slice(root.length);
}

/**
 * A new empty folder that both this machine and the cluster's jobs can reach (under the cluster's
 * /tmp): `hostPath` to write it from a test, `clusterPath` to name it in what runs on the cluster.
 */
export function clusterTempDir(cluster: Pick<LocalCluster, 'rootDir'>, prefix: string): { hostPath: string; clusterPath: string } {
  const hostPath = mkdtempSync(path.join(clusterHostPath(cluster, '/tmp'), prefix));
  return { hostPath, clusterPath: hostClusterPath(cluster, hostPath) };
}
