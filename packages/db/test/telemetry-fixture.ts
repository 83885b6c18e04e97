// What the database's integration tests share: a cluster to own campaigns, runs to write batches
// for, and the smallest batch (one gpu0.power sample at t0 + seq) with whatever a test adds to it.
import { secretBoxFrom } from '@erg/secrets';
import type { NormalizedBatch } from '@erg/spec';
import { TEST_SECRET_KEY } from '@erg/testkit';
import { createCampaign, createCluster, createProject, type Database } from '@erg/db';
import { testCampaignSpec } from '@erg/db/testing';

/** A cluster of the project, named `name`, that nothing connects to: what a test's campaigns need to belong to one. */
export function testCluster(db: Database, projectId: string, name = 'c1'): ReturnType<typeof createCluster> {
  return createCluster(
    db, { projectId, name, host: '127.0.0.1', port: 2222, username: 'root', privateKey: 'k', hostKeySha256: 'SHA256:x', workDir: '/w' }, secretBoxFrom({ ERG_SECRET_KEY: TEST_SECRET_KEY }),
  );
}

/** `repetitions` runs of one configuration of a Slurm campaign in a new project, by id. */
export async function slurmRuns(db: Database, project: string, repetitions: number): Promise<string[]> {
  const projectId = (await createProject(db, { name: project })).id;
  const cluster = await testCluster(db, projectId);
  const campaign = await createCampaign(db, {
    name: 't', execution: 'slurm', clusterId: cluster.id, projectId, spec: testCampaignSpec(), specText: null, repetitions, configurations: [{ key: 'a=1', parameters: { a: 1 } }],
  });
  return campaign.runs.map((r) => r.id);
}

/** A batch of one node with one gpu0.power sample at t0 + seq, and `more` (sensors, marks). */
export function oneSampleBatch(t0: number, node: string, seq: number, more: Partial<NormalizedBatch> = {}): NormalizedBatch {
  return { node, seq, sensors: [], sampleCount: 1, series: [{ sensor: 'gpu0.power', t: Float64Array.from([t0 + seq]), v: Float64Array.from([300]) }], ...more };
}
