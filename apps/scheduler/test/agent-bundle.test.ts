// The agent and the mark writers are staged under the site's run umask like run directories:
// by default the cluster user's alone (issue 27 §6).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AgentBundle } from '../src/agent-bundle';
import type { ClusterLink } from '../src/connections';

describe('staging the agent bundle', () => {
  let dir: string;
  let bundle: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'erg-agent-bundle-'));
    bundle = path.join(dir, 'erg-agent.js');
    fs.writeFileSync(bundle, '// agent\n');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** What ensureStaged asked the connection to write: the files' modes and the folders' mode. */
  async function staged(umask?: number) {
    const writes: { files: { name: string; mode: number }[]; options: { dirMode?: number } }[] = [];
    const link = { connection: { writeFiles: async (_dir: string, files: { name: string; mode: number }[], options: { dirMode?: number } = {}) => void writes.push({ files, options }) } };
    const cluster = { id: 'c1', workDir: '/scratch/erg' } as Parameters<AgentBundle['ensureStaged']>[0];
    await (umask === undefined ? new AgentBundle(undefined, bundle) : new AgentBundle(umask, bundle)).ensureStaged(cluster, link as unknown as ClusterLink);
    expect(writes).toHaveLength(1);
    return { modes: Object.fromEntries(writes[0]!.files.map((f) => [path.basename(f.name), f.mode])), dirMode: writes[0]!.options.dirMode };
  }

  it('writes 0600 files, a 0700 erg-mark and 0700 folders by default', async () => {
    const { modes, dirMode } = await staged();
    expect(Object.entries(modes).map(([name, mode]) => [name.endsWith('.js') ? 'agent' : name, mode])).toEqual([['agent', 0o600], ['erg-mark', 0o700], ['erg.py', 0o600]]);
    expect(dirMode).toBe(0o700);
  });

  it("takes the site's umask (027: the group reads and runs them)", async () => {
    const { modes, dirMode } = await staged(0o027);
    expect(Object.values(modes)).toEqual([0o640, 0o750, 0o640]);
    expect(dirMode).toBe(0o750);
  });
});
