import path from 'node:path';
import { clusterHostPath, hostClusterPath, localClusterFile, localClusterSeries, repoRoot } from '../src/local-cluster';

describe('which local cluster the e2e tests use', () => {
  test('ERG_E2E_SLURM picks it: 22.05 unless told 24.11 or multinode; anything else is an error naming the choices', () => {
    expect(localClusterSeries({})).toBe('22.05');
    expect(localClusterSeries({ ERG_E2E_SLURM: '' })).toBe('22.05');
    expect(localClusterSeries({ ERG_E2E_SLURM: '24.11' })).toBe('24.11');
    expect(localClusterSeries({ ERG_E2E_SLURM: 'multinode' })).toBe('multinode');
    expect(() => localClusterSeries({ ERG_E2E_SLURM: '23.02' })).toThrow(/ERG_E2E_SLURM="23.02": expected one of 22.05, 24.11, multinode/);
  });

  test("each cluster's file is where its up.sh copies it", () => {
    expect(localClusterFile('22.05')).toBe(path.join(repoRoot(), '.erg', 'local-slurm', 'cluster.json'));
    expect(localClusterFile('24.11')).toBe(path.join(repoRoot(), '.erg', 'local-slurm-24.11', 'cluster.json'));
    expect(localClusterFile('multinode')).toBe(path.join(repoRoot(), '.erg', 'local-slurm-multinode', 'cluster.json'));
  });
});

describe('cluster paths and host paths', () => {
  const onMachine = { rootDir: '/' };
  const inRoot = { rootDir: '/var/lib/erg-local/trixie-root' };

  test('a cluster path is rootDir + path here, and back', () => {
    expect(clusterHostPath(onMachine, '/var/lib/erg-local/work/x')).toBe('/var/lib/erg-local/work/x');
    expect(clusterHostPath(inRoot, '/var/lib/erg-local/work/x')).toBe('/var/lib/erg-local/trixie-root/var/lib/erg-local/work/x');
    expect(hostClusterPath(inRoot, '/var/lib/erg-local/trixie-root/tmp/lab')).toBe('/tmp/lab');
    expect(hostClusterPath(inRoot, '/var/lib/erg-local/trixie-root')).toBe('/');
    expect(hostClusterPath(onMachine, '/tmp/lab')).toBe('/tmp/lab');
  });

  test('refuses relative cluster paths and host paths outside the root', () => {
    expect(() => clusterHostPath(inRoot, 'work/x')).toThrow(/not an absolute cluster path/);
    expect(() => hostClusterPath(inRoot, '/tmp/lab')).toThrow(/outside the cluster's root/);
    expect(() => hostClusterPath(inRoot, '/var/lib/erg-local/trixie-root.old/tmp')).toThrow(/outside the cluster's root/);
  });
});
