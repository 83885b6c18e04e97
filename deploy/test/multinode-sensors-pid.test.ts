// deploy/local-slurm/multinode/lib.sh's sensors_pid: whether the pid in the sensor emulator's pid
// file is the emulator. Its comm is only `node`; a pid file left by an earlier boot of the cluster
// (its processes gone, /run kept) may name a pid that another Node.js process has since got — with
// pid_max 32768 and thousands of processes per test run, that happens — and the cluster then took
// the emulator for running while nothing wrote the nodes' meters. Runs lib.sh's function in bash
// against pid files of processes this test starts; nothing of the cluster is touched.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot, waitFor } from '@erg/testkit';

const lib = path.join(repoRoot(), 'deploy', 'local-slurm', 'multinode', 'lib.sh');

/** sensors_pid's exit status and output for a pid file naming `pid`; NODES_DIR is lib.sh's. */
function sensorsPid(pidfile: string): { status: number | null; out: string } {
  const r = spawnSync('bash', ['-c', 'source "$0" && sensors_pid "$1"', lib, pidfile], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout.trim() };
}

describe("the multi-node cluster's sensor emulator, found by its pid file", () => {
  let dir: string;
  const children: ChildProcess[] = [];
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'erg-sensors-pid-'));
  });
  afterAll(() => {
    for (const c of children) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  /** A Node.js process that idles with these arguments, started; its pid. */
  async function idleNode(args: string[]): Promise<number> {
    const script = path.join(dir, args[0]!);
    writeFileSync(script, 'setInterval(() => {}, 1e9);\n');
    const child = spawn(process.execPath, [script, ...args.slice(1)], { stdio: 'ignore' });
    children.push(child);
    // Its comm is `node` once it has exec'd.
    await waitFor(() => spawnSync('cat', [`/proc/${child.pid}/comm`], { encoding: 'utf8' }).stdout.trim() === path.basename(process.execPath), { timeoutMs: 10_000, what: 'the idle node process' });
    return child.pid!;
  }

  function pidfileOf(pid: number | string): string {
    const file = path.join(dir, `sensors-${pid}.pid`);
    writeFileSync(file, `${pid}\n`);
    return file;
  }

  test('another Node.js process behind the pid is not the emulator: the cluster starts one', async () => {
    const other = await idleNode(['server.js', '--port', '3000']);
    expect(sensorsPid(pidfileOf(other)).status).toBe(1);
    // The same script name without this cluster's nodes directory after it is not this cluster's emulator either.
    const elsewhere = await idleNode(['sensors.js', '/tmp/other-nodes', '250']);
    expect(sensorsPid(pidfileOf(elsewhere)).status).toBe(1);
  });

  test("an emulator of this cluster's nodes, from any checkout, is", async () => {
    const nodesDir = spawnSync('bash', ['-c', 'source "$0" && printf %s "$NODES_DIR"', lib], { encoding: 'utf8' }).stdout;
    expect(nodesDir).toMatch(/^\//);
    const emulator = await idleNode(['sensors.js', nodesDir, '250', 'gh-001=/run/netns/gh-001']);
    expect(sensorsPid(pidfileOf(emulator))).toEqual({ status: 0, out: String(emulator) });
  });

  test('a pid file naming no process, or garbage, names no emulator', () => {
    expect(sensorsPid(pidfileOf(2_000_000_000)).status).toBe(1);
    expect(sensorsPid(pidfileOf('not-a-pid')).status).toBe(1);
    expect(sensorsPid(path.join(dir, 'missing.pid')).status).toBe(1);
  });
});
