import type { Cluster, Configuration, Run } from '@erg/db';

/** Database rows → API bodies. Secrets (the private key) have no way out of here. */

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function clusterView(c: Cluster) {
  return {
    id: c.id,
    name: c.name,
    host: c.host,
    port: c.port,
    user: c.username,
    hostKeySha256: c.hostKeySha256,
    defaultPartition: c.defaultPartition,
    workDir: c.workDir,
    agentCommand: c.agentCommand,
    agentApiUrl: c.agentApiUrl,
    modelIdleW: c.modelIdleW,
    modelMaxW: c.modelMaxW,
    lastError: c.lastError,
    lastContactAt: iso(c.lastContactAt),
    createdAt: c.createdAt.toISOString(),
  };
}

/** Shared with the scheduler, which puts the same body in suite webhooks. */
export { campaignSummaryView as campaignView } from '@erg/db';

/** A pending run waits for its cluster; when the cluster is failing, that failure is the reason. */
function effectiveReason(run: Run, cluster: Cluster | null): string | null {
  if (run.state === 'pending' && cluster?.lastError) return `waiting for cluster "${cluster.name}": ${cluster.lastError}`;
  return run.reason;
}

export function runSummaryView(run: Run & { configuration: Configuration }, cluster: Cluster | null) {
  return {
    id: run.id,
    configurationKey: run.configuration.key,
    parameters: run.configuration.parameters as Record<string, unknown>,
    repetition: run.repetition,
    state: run.state,
    slurmJobId: run.slurmJobId,
    exitCode: run.exitCode,
    reason: effectiveReason(run, cluster),
  };
}

export function runView(run: Run & { configuration: Configuration }, cluster: Cluster | null) {
  const timeS =
    run.workloadStartNs !== null && run.workloadEndNs !== null ? Number(run.workloadEndNs - run.workloadStartNs) / 1e9 : null;
  return {
    ...runSummaryView(run, cluster),
    campaignId: run.campaignId,
    slurmState: run.slurmState,
    signal: run.signal,
    submitAttempts: run.submitAttempts,
    submittedAt: iso(run.submittedAt),
    startedAt: iso(run.startedAt),
    endedAt: iso(run.endedAt),
    timeS,
    nodeList: run.nodeList,
    runDir: run.runDir,
    metrics: (run.metrics as Record<string, number | null> | null) ?? null,
    jobScript: run.jobScript,
  };
}
