import { DEFAULT_PROJECT, setProjectClusterPolicy, type Database } from '@erg/db';

/**
 * What an admin allows a project for the clusters tests reach: the local Slurm clusters
 * (deploy/local-slurm) and the tests' own sshd servers (startTestSshd) all listen on loopback,
 * which erg refuses to connect to unless the project's cluster policy allows it (docs/security.md,
 * "Clusters and jump hosts: address policy"). Tests that build a ClusterConnection themselves
 * pass these as its `allowHosts`.
 */
export const LOOPBACK_ALLOW_HOSTS: readonly string[] = ['127.0.0.1'];

/**
 * Allows loopback in `project`'s cluster policy, as an admin does for the quickstart (PUT
 * /v1/projects/{name}/cluster-policy): every test that registers a cluster on 127.0.0.1 does this
 * first (startTestApi and the e2e harness for the default project).
 */
export async function allowLoopbackClusters(db: Database, project: string = DEFAULT_PROJECT): Promise<void> {
  const updated = await setProjectClusterPolicy(db, project, { allowHosts: [...LOOPBACK_ALLOW_HOSTS] });
  if (!updated) throw new Error(`allowLoopbackClusters: there is no project "${project}"`);
}
