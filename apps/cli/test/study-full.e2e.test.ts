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
import { Harness } from '../../scheduler/test/harness';
import { requireBuiltCli, spawnCli, tempDir } from './helpers';

jest.setTimeout(600_000);

describe('the study (examples/multimodal-cpu.yaml) on the multi-node local cluster', () => {
  const h = new Harness();
  const home = tempDir('erg-study-e2e-');

  beforeAll(async () => {
    requireBuiltCli();
    await h.start();
    if (!h.local.nodes || h.local.nodes.length < 2) throw new Error('ERG_E2E_SLURM=multinode: this file needs the multi-node cluster (up.sh --multinode)');
    await h.startInProcessScheduler();
    await h.registerCluster('local');
  });
  afterAll(async () => {
    await h.stop();
  });

  test('every run trains and is measured on each of its nodes; phases, byte metrics and network bytes per configuration; --watch ends with the answer', async () => {
    const decoded = decodeCampaignText(readFileSync(path.join(repoRoot(), 'examples', 'multimodal-cpu.yaml'), 'utf8'), 'yaml');
    if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues));
    const spec = { ...(decoded.raw as Record<string, unknown>), cluster: 'local' };
    const file = path.join(home, 'study.json');
    writeFileSync(file, JSON.stringify(spec));
    const env = { HOME: home, ERG_CONFIG: path.join(home, 'config.json'), ERG_API_URL: h.url, ERG_TOKEN: h.token };
    const t0 = Date.now();
    const watched = await spawnCli(['submit', file, '--watch', '--interval', '2'], { cwd: home, env, timeoutMs: 590_000 });
    writeFileSync('/tmp/I-full-watch.txt', stripAnsi(watched.stdout) + '\n--stderr--\n' + watched.stderr + `\nwall ${(Date.now() - t0) / 1000} s\n`);
    const id = /Campaign \S+ created: ([0-9a-f-]{36})/.exec(stripAnsi(watched.stdout))![1]!;
    for (const args of [['--by-phase'], ['--data-movement']]) {
      const r = await spawnCli(['results', id, ...args], { cwd: home, env, timeoutMs: 60_000 });
      writeFileSync(`/tmp/I-full${args[0]}.txt`, stripAnsi(r.stdout));
    }
  });
});
