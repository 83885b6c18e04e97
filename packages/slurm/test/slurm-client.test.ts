import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SlurmClient, SlurmCommandError, type CommandRunner, type ExecResult } from '../src';

// The real round trip is in slurm-client.e2e.test.ts; here a scripted runner pins down how many
// remote commands each operation costs and how their failures surface.
const fixture = (name: string) => readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');

function scripted(answer: (command: string) => Partial<ExecResult>): CommandRunner & { commands: string[] } {
  const commands: string[] = [];
  return {
    commands,
    exec: async (command) => {
      commands.push(command);
      return { code: 0, signal: null, stdout: '', stderr: '', ...answer(command) };
    },
  };
}

const answerFromFixtures = (command: string) =>
  command.includes(' squeue ') ? { stdout: fixture('squeue-mixed.txt') } : { stdout: fixture('sacct-mixed.txt') };

describe('SlurmClient.findJobsByName', () => {
  it('answers from one squeue call when squeue knows every name', async () => {
    const runner = scripted(answerFromFixtures);
    const found = await new SlurmClient(runner).findJobsByName(['erg-fixture-ok', 'erg-fixture-fail'], { since: new Date() });
    expect(runner.commands).toHaveLength(1);
    expect(found.get('erg-fixture-ok')?.map((j) => j.jobId).sort()).toEqual(['19', '30']);
  });

  it('asks sacct once for the names squeue does not know; unknown names map to []', async () => {
    const runner = scripted((c) => (c.includes(' squeue ') ? { stdout: '' } : { stdout: fixture('sacct-mixed.txt') }));
    const found = await new SlurmClient(runner).findJobsByName(['erg-fixture-held', 'erg-nope'], { since: new Date() });
    expect(runner.commands.map((c) => c.split(' ')[8])).toEqual(['squeue', 'sacct']);
    // Queries are bounded on the cluster too, inside the SSH deadline (60 s by default).
    expect(runner.commands[0]).toMatch(/^timeout -k 2 58 env TZ=UTC /);
    expect(found.get('erg-fixture-held')?.[0]?.runState).toBe('cancelled');
    expect(found.get('erg-nope')).toEqual([]);
  });
});

describe('SlurmClient errors', () => {
  it('turns a failing squeue into a retryable SlurmCommandError', async () => {
    const runner = scripted(() => ({ code: 1, stderr: 'slurm_load_jobs error: Unable to contact slurm controller (connect failure)' }));
    const err = await new SlurmClient(runner).squeue().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SlurmCommandError);
    expect(err).toMatchObject({ code: 'ERG_SLURM_COMMAND_FAILED', retryable: true });
  });

  it('treats scancel of jobs that already ended as done', async () => {
    const runner = scripted(() => ({ code: 1, stderr: 'scancel: error: Kill job error on job id 12: Job/step already completing or completed\n' }));
    await expect(new SlurmClient(runner).scancel(['12'])).resolves.toBeUndefined();
    const failing = scripted(() => ({ code: 1, stderr: 'scancel: error: Kill job error on job id 12: Access/permission denied\n' }));
    await expect(new SlurmClient(failing).scancel(['12'])).rejects.toThrow(SlurmCommandError);
  });

  it('costs nothing for empty batches', async () => {
    const runner = scripted(() => ({}));
    const client = new SlurmClient(runner);
    expect(await client.submitMany([], null)).toEqual([]);
    await client.scancel([]);
    expect((await client.findJobsByName([])).size).toBe(0);
    expect(runner.commands).toEqual([]);
  });
});
