// Phases from the workload's own log, end to end on the local Slurm cluster: a job prints
// timestamped "step begins" / "step ends" lines around sleeps, and when it ends the scheduler
// reads them from stdout.log as marks of the run (writer log), on the node its telemetry came
// from, before the run's energy is computed.
import { listRunMarks, telemetrySummary } from '@erg/db';
import { localClusterHarness } from './harness';

jest.setTimeout(300_000);

const NOW = 'date -u +%Y-%m-%dT%H:%M:%S.%3NZ';

describe('phases read from the log on the local Slurm cluster', () => {
  const h = localClusterHarness();

  test('the begin/end lines a job prints become the run’s marks, at the times printed; the energy is computed', async () => {
    const campaign = await h.submit({
      name: 'log-phases',
      cluster: 'local',
      telemetry: { intervalMs: 100 },
      run: [
        'for i in 1 2 3; do',
        `  echo "[$(${NOW})] step begins"`,
        '  sleep 0.4',
        `  echo "[$(${NOW})] step ends"`,
        '  echo "global_step=$i at $(date +%s.%3N)"',
        '  sleep 0.2',
        'done',
        'echo "[not a time] step begins"',
      ].join('\n'),
      phases: [
        { name: 'optimizer', begin: '^\\[(?<t>[^\\]]+)\\] step begins', end: '^\\[(?<t>[^\\]]+)\\] step ends' },
        { name: 'step', step: '^global_step=\\d+ at (?<t>[0-9.]+)$', timeFormat: 'unix' },
      ],
    });
    const [run] = await h.waitForCampaignEnd(campaign.id);
    expect(run.state).toBe('completed');

    // What the job printed, read back from the cluster.
    const { connection } = h.slurmLink();
    const stdout = (await connection.exec(`cat '${run.runDir}/stdout.log'`)).stdout;
    const printed = (word: string) => [...stdout.matchAll(new RegExp(`^\\[([^\\]]+)\\] step ${word}$`, 'gm'))].map((m) => Date.parse(m[1]!)).filter((t) => !Number.isNaN(t));
    const begins = printed('begins');
    const ends = printed('ends');
    const steps = [...stdout.matchAll(/^global_step=\d+ at ([0-9.]+)$/gm)].map((m) => Number(m[1]) * 1000);
    expect([begins.length, ends.length, steps.length]).toEqual([3, 3, 3]);

    const nodes = [...new Set((await telemetrySummary(h.db, run.id)).map((s) => s.node))];
    expect(nodes.length).toBeGreaterThan(0);
    const marks = (await listRunMarks(h.db, run.id)).filter((m) => m.writer === 'log');
    for (const node of nodes) {
      const own = marks.filter((m) => m.node === node);
      const times = (kind: string, name: string) => own.filter((m) => m.kind === kind && m.name === name).map((m) => m.t).sort((a, b) => a - b);
      const close = (got: number[], want: number[]) => {
        expect(got).toHaveLength(want.length);
        got.forEach((t, i) => expect(Math.abs(t - want[i]!)).toBeLessThanOrEqual(50));
      };
      close(times('begin', 'optimizer'), begins);
      close(times('end', 'optimizer'), ends);
      close(times('step', 'step'), steps);
      expect(own.every((m) => m.clock === 'wall' && m.offset >= 2 ** 40)).toBe(true);
      expect(new Set(own.map((m) => m.offset)).size).toBe(own.length);
    }
    expect(marks).toHaveLength(9 * nodes.length);
    // The line whose timestamp is not one is skipped, and the run says so.
    expect(run.warnings).toEqual([expect.stringMatching(/^phase "optimizer" \(begin regex .*\): 1 line of stdout\.log had a timestamp .* \(first: "not a time"\) and was skipped$/)]);

    const energy = await h.call('GET', `/v1/runs/${run.id}/energy`);
    expect(energy.status).toBe(200);
    expect(energy.body.energyJ).toBeGreaterThan(0);
  });
});
