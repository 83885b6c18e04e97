// The motivating study end to end on the multi-node local cluster (issue 29 §2):
// examples/multimodal-cpu.yaml — the reference training workload staged through the spec's files,
// SP=2 as one rank on each of two nodes (gloo over the nodes' eth0) — submitted with the built
// `erg submit --watch` as a new user would, at its smallest size (offload none/optimizer × SP 1/2,
// checkpointing on, one repetition: the suite's time is a budget; the example's full size is in
// docs/study.md). The nodes' power meters are the cluster's FIXTURES (docs/local-cluster.md); the
// training, srun across nodes, the network bytes and erg are real.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stripAnsi, studyAnswer, studyAnswerLines, type CampaignResults } from '@erg/cli';
import { decodeCampaignText } from '@erg/spec';
import { repoRoot } from '@erg/testkit';
import { localClusterHarness } from '../../scheduler/test/harness';
import { requireBuiltCli, spawnCli, tempDir } from './helpers';

jest.setTimeout(240_000);

describe('the study (examples/multimodal-cpu.yaml) on the multi-node local cluster', () => {
  const h = localClusterHarness();
  const home = tempDir('erg-study-e2e-');

  beforeAll(() => {
    requireBuiltCli();
    if (!h.local.nodes || h.local.nodes.length < 2) throw new Error('ERG_E2E_SLURM=multinode: this file needs the multi-node cluster (up.sh --multinode)');
  });

  test('every run trains and is measured on each of its nodes; phases, byte metrics and network bytes per configuration; --watch ends with the answer', async () => {
    const decoded = decodeCampaignText(readFileSync(path.join(repoRoot(), 'examples', 'multimodal-cpu.yaml'), 'utf8'), 'yaml');
    if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues));
    const spec = {
      ...(decoded.raw as Record<string, unknown>), cluster: 'local', repetitions: 1,
      parameters: { offload: ['none', 'optimizer'], checkpointing: ['checkpointing'], sp: [1, 2] },
    };
    const file = path.join(home, 'study.json');
    writeFileSync(file, JSON.stringify(spec));
    const env = { HOME: home, ERG_CONFIG: path.join(home, 'config.json'), ERG_API_URL: h.url, ERG_TOKEN: h.token };
    const watched = await spawnCli(['submit', file, '--watch', '--interval', '1'], { cwd: home, env, timeoutMs: 200_000 });
    expect(watched.stderr).toBe('');
    expect(watched.code).toBe(0);
    const id = /Campaign \S+ created: ([0-9a-f-]{36})/.exec(stripAnsi(watched.stdout))![1]!;

    const { body: campaign } = await h.call('GET', `/v1/campaigns/${id}`);
    expect(campaign.runCounts).toEqual({ completed: 4 });
    const runs = (await h.call('GET', `/v1/campaigns/${id}/runs`)).body.items as { id: string; parameters: Record<string, unknown> }[];
    for (const run of runs) {
      const { body: e } = await h.call('GET', `/v1/runs/${run.id}/energy`);
      // SP=2 ran on two nodes, each measured by its own agent (its module meter).
      expect(e.nodes.map((n: { node: string }) => n.node)).toHaveLength(Number(run.parameters.sp));
      for (const n of e.nodes as { energyJ: number; coverage: number }[]) {
        expect(n.energyJ).toBeGreaterThan(0);
        expect(n.coverage).toBeGreaterThan(0.9);
      }
      expect(e.flags).not.toContain('missing_node');
    }

    const { body: results } = (await h.call('GET', `/v1/campaigns/${id}/results`)) as { body: CampaignResults };
    const keys = ['none;sp=1', 'none;sp=2', 'optimizer;sp=1', 'optimizer;sp=2'].map((k) => `checkpointing=checkpointing;offload=${k}`);
    expect(results.configurations.map((c) => c.key).sort()).toEqual(keys);
    const phasesOf = new Map(results.phases!.configurations.map((c) => [c.key, c.phases.map((p) => p.name)]));
    const networkOf = new Map(results.dataMovement!.configurations.map((c) => [c.key, c.kinds.find((k) => k.kind === 'network')!.bytes.mean!]));
    for (const c of results.configurations) {
      const offload = c.parameters.offload === 'optimizer';
      const sp2 = c.parameters.sp === 2;
      // The script's marks, per configuration: offload transfers only where it offloads, exchanges only where the sequence is split.
      const phases = phasesOf.get(c.key)!;
      expect(phases).toEqual(expect.arrayContaining(['forward', 'backward', 'optimizer_step']));
      expect(phases.includes('offload_transfer')).toBe(offload);
      expect(phases.includes('all_to_all')).toBe(sp2);
      // Its byte counts: host bytes both ways only when offloading, and the same each way; collectives only across ranks.
      const bytes = (name: string) => c.metrics[name]!.mean!;
      expect(bytes('host_to_device_bytes')).toBe(offload ? bytes('device_to_host_bytes') : 0);
      if (offload) expect(bytes('host_to_device_bytes')).toBeGreaterThan(0);
      expect(bytes('alltoall_bytes') > 0).toBe(sp2);
      expect(bytes('allreduce_bytes') > 0).toBe(sp2);
      if (sp2) {
        // The ranks' exchanges crossed the network between the two nodes: at least what one side sent of them.
        expect(networkOf.get(c.key)!).toBeGreaterThan((bytes('alltoall_bytes') + bytes('allreduce_bytes')) / 2);
        expect(networkOf.get(c.key)!).toBeGreaterThan(networkOf.get(c.key.replace(/sp=2$/, 'sp=1'))!);
      }
    }

    // --watch ended with the answer, as the results' claims, phases and data movement give it.
    const answer = studyAnswer(results)!;
    const { heading, lines } = studyAnswerLines(answer);
    const out = stripAnsi(watched.stdout);
    expect(out.trimEnd().endsWith([`${heading}:`, ...lines.map((l) => `  ${l}`)].join('\n'))).toBe(true);
    if (answer.fastest !== answer.mostFrugal) {
      expect(answer.phase).not.toBeNull();
      expect(answer.movement).not.toBeNull();
    }
  });
});
