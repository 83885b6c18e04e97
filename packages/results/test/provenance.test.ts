import type { RunNodeRecord } from '@erg/db';
import type { NodeFingerprint } from '@erg/spec';
import { flattenClass, runFingerprintClasses } from '../src/fingerprint-classes';
import { slurmEnergyBeside } from '../src/run-figures';

const fp = (node: string, over: Partial<NodeFingerprint> = {}): NodeFingerprint => ({
  node, hostname: node, kernel: '6.8.0', arch: 'arm64', cpuModel: 'ARM Neoverse-V2', cpuCount: 72,
  gpus: [{ index: 0, name: 'NVIDIA GH200 480GB', uuid: `GPU-${node}`, vbios: '96.00' }],
  driverVersion: '550.54.15', cudaVersion: '12.4', nvmlVersion: '12.550.54.15', slurmVersion: 'slurm 24.11.5', container: null, modules: ['cuda/12.4', 'nccl/2.20'],
  workload: { dir: '/home/a/bench', gitCommit: 'abc', gitDirty: false }, agentVersion: '0.1.0', ...over,
});
const node = (name: string, classId: string | null, f: NodeFingerprint | null): RunNodeRecord => ({ node: name, fingerprintId: classId && `${classId}-${name}`, fingerprintClassId: classId, fingerprint: f, power: null });

describe("a campaign's kinds of machine", () => {
  test('a class reads as flat fields, without what names one node', () => {
    const flat = flattenClass(fp('gh-001'));
    expect(flat).toMatchObject({ driverVersion: '550.54.15', 'gpus[0].name': 'NVIDIA GH200 480GB', modules: 'cuda/12.4 nccl/2.20', 'workload.gitCommit': 'abc', container: '(unknown)' });
    expect(Object.keys(flat).some((k) => /uuid|hostname|^node$/.test(k))).toBe(false);
  });

  test('a run is of its nodes\' class; a run across two kinds gets one id and both values; a run without provenance none', () => {
    const { byRun, classes } = runFingerprintClasses(new Map([
      ['r1', [node('gh-001', 'A', fp('gh-001')), node('gh-002', 'A', fp('gh-002'))]],
      ['r2', [node('gh-001', 'A', fp('gh-001')), node('gh-003', 'B', fp('gh-003', { driverVersion: '535.104.05' }))]],
      ['r3', [node('gh-004', null, null)]],
    ]));
    expect(byRun.get('r1')).toBe('A');
    expect(byRun.get('r2')).toMatch(/^[0-9a-f]{64}$/);
    expect(byRun.get('r3')).toBeNull();
    expect(classes.get(byRun.get('r2')!)!.driverVersion).toBe('550.54.15 + 535.104.05');
  });
});

describe("Slurm's figure beside erg's", () => {
  test('says that Slurm measured nothing instead of 0 J', () => {
    expect(slurmEnergyBeside(null, 1000)).toMatchObject({ energyJ: null, ratio: null, note: expect.stringContaining('Slurm reported no energy') });
  });
  test('gives the ratio where Slurm measured', () => {
    expect(slurmEnergyBeside(1100, 1000)).toMatchObject({ energyJ: 1100, ratio: 1.1, note: expect.stringContaining('1.100 × erg') });
  });
});
