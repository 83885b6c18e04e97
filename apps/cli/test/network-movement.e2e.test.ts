// Network traffic as data movement, end to end (issue 28 §3): a campaign on the local Slurm cluster
// whose workload sends 0 or 1000 MB over a TCP connection to itself, the agents told to read the
// loopback (`telemetry.netInterfaces: [lo]`: on this one machine that is the interface the
// workload's bytes cross; by default the agent leaves lo out). The agents read the real
// /sys/class/net; the bytes reach GET /v1/campaigns/:id/results `dataMovement` per configuration
// and the built `erg results --data-movement`. lo is the whole machine's loopback, shared with
// the other tests and erg's own connections (tens of MB a second while the suite runs beside
// it), so a run's bytes are the workload's and then some: enough of them to tell the workload's
// gigabyte apart from that, and from twice or four times it.
import path from 'node:path';
import { localClusterHarness } from '../../scheduler/test/harness';
import { ANSI, parseCsv, requireBuiltCli, spawnCli, tempDir } from './helpers';

jest.setTimeout(180_000);

const MB = 1e6;

/**
 * Sends {{mb}} MB from one socket to another of the same process over 127.0.0.1 (python3 is on
 * every local cluster's nodes), between a second of quiet on either side: a burst at the window's
 * very edge would share a sampling interval with the time outside the window, and the rate over
 * that interval would put part of it outside.
 */
const WORKLOAD = [
  'sleep 1',
  "python3 - {{mb}} <<'PY'",
  'import socket, sys, threading',
  'n = int(sys.argv[1]) * 1000000',
  "srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(1)",
  'got = [0]',
  'def drain():',
  '    c, _ = srv.accept()',
  '    while True:',
  '        b = c.recv(1 << 20)',
  '        if not b: break',
  '        got[0] += len(b)',
  't = threading.Thread(target=drain); t.start()',
  "c = socket.create_connection(srv.getsockname()); chunk = b'x' * (1 << 20); sent = 0",
  'while sent < n:',
  '    k = min(len(chunk), n - sent); c.sendall(chunk[:k]); sent += k',
  'c.close(); t.join()',
  "print('moved=%d' % got[0])",
  'PY',
  'sleep 1',
].join('\n');

describe('network bytes per configuration (local Slurm cluster, real /sys/class/net)', () => {
  const h = localClusterHarness();
  const home = tempDir('erg-net-e2e-');

  beforeAll(() => {
    requireBuiltCli();
  });

  test('a workload that moves 1000 MB over the loopback: that many network bytes in its configuration, in the API and in erg results --data-movement', async () => {
    const campaign = await h.submit({
      name: 'network-bytes', cluster: 'local', repetitions: 1, parameters: { mb: [0, 1000] },
      // Whole nodes, so the two runs take turns: lo's counters are the node's, and a run beside the other would count its gigabyte too.
      resources: { exclusive: true },
      telemetry: { intervalMs: 200, netInterfaces: ['lo'] },
      run: WORKLOAD,
      metrics: [{ name: 'moved', regex: 'moved=([0-9]+)' }],
    });
    const runs = await h.waitForCampaignEnd(campaign.id);
    expect(runs.map((r) => r.state)).toEqual(['completed', 'completed']);

    const { body: results } = await h.call('GET', `/v1/campaigns/${campaign.id}/results`);
    type Kind = { kind: string; bytes: { n: number; mean: number } };
    const byKey = new Map<string, Kind[]>(results.dataMovement.configurations.map((c: { key: string; kinds: Kind[] }) => [c.key, c.kinds]));
    const network = (key: string) => byKey.get(key)?.find((k) => k.kind === 'network');
    const quiet = network('mb=0')!;
    const busy = network('mb=1000')!;
    expect(busy.bytes.n).toBe(1);
    // The workload's 1000 MB once (sent only: not its received copy too), with the others' traffic beside it.
    expect(busy.bytes.mean).toBeGreaterThanOrEqual(1000 * MB);
    expect(busy.bytes.mean).toBeLessThan(1500 * MB);
    expect(quiet.bytes.mean).toBeLessThan(500 * MB);
    const busyRun = runs.find((r) => r.configurationKey === 'mb=1000');
    const { body: energy } = await h.call('GET', `/v1/runs/${busyRun.id}/energy`);
    const lo = energy.dataMovement.links.find((l: { kind: string }) => l.kind === 'network');
    // Sent is what counts; what lo received (the same bytes, its other end) is shown beside it.
    expect(lo).toMatchObject({ device: 'nic0', sensors: ['nic0.net_rx', 'nic0.net_tx'], sources: ['net'] });
    expect(lo.byDirection.rx).toBeGreaterThanOrEqual(1000 * MB);
    expect(lo.bytes).toBeCloseTo(lo.byDirection.tx, 0);

    // The built CLI shows the same figures.
    const env = { HOME: home, ERG_CONFIG: path.join(home, 'config.json'), ERG_API_URL: h.url, ERG_TOKEN: h.token };
    const table = await spawnCli(['results', campaign.id, '--data-movement'], { cwd: home, env });
    expect(table.stdout).not.toMatch(ANSI);
    expect(table.stdout).toMatch(/^mb=1000\s+1\s+network\s/m);
    const csv = parseCsv((await spawnCli(['results', campaign.id, '--data-movement', '--format', 'csv'], { cwd: home, env })).stdout);
    const header = csv[0]!;
    const row = csv.find((r) => r[0] === 'mb=1000' && r[1] === 'network')!;
    expect(Number(row[header.indexOf('bytes')])).toBeCloseTo(busy.bytes.mean, 0);
  });
});
