import {
  cpuMaxFreqText, differingMachines, entryId, fingerprintFacts, fingerprintPrefix, fingerprintSummary, flagLabel, gpuModels, marksOf, measuredConfigurations, powerInForceRows,
  powerNoteLine, powerRecordRows, powerRecordStatus, powerStateText, resultsCsvRows, runOrderLabel, runOrderLine, slurmEnergyFigure, workloadText, type FingerprintFields,
  type PowerRecordFields,
} from '@erg/format';

const fingerprint: FingerprintFields = {
  node: 'nid001', hostname: 'nid001', kernel: '5.14.0', arch: 'x86_64', cpuModel: null, cpuCount: 64,
  gpus: [
    { index: 0, name: 'NVIDIA H100', uuid: 'GPU-0', vbios: '96.00.61' },
    { index: 1, name: 'NVIDIA H100', uuid: 'GPU-1', vbios: '96.00.74' },
    { index: 2, name: 'NVIDIA A100', uuid: null, vbios: null },
  ],
  driverVersion: null, cudaVersion: '12.2', nvmlVersion: null, slurmVersion: null, container: { image: 'docker://ubuntu:24.04', digest: null },
  modules: [], workload: { dir: '/w', gitCommit: null, gitDirty: null }, agentVersion: '0.2.0',
};

describe('fingerprints', () => {
  test('GPUs by model and count, in order of first appearance; none without GPUs', () => {
    expect(gpuModels(fingerprint)).toBe('NVIDIA H100 × 2, NVIDIA A100 × 1');
    expect(gpuModels({ gpus: [] })).toBe('none');
  });

  test('every fact, `—` where the node could not say, every distinct VBIOS; UUIDs only when verbose', () => {
    const facts = new Map(fingerprintFacts(fingerprint));
    expect([...facts.keys()]).toEqual(['GPUs', 'Driver', 'CUDA', 'NVML', 'VBIOS', 'CPU', 'Kernel', 'Slurm', 'Container', 'Modules', 'Workload', 'Agent']);
    expect(facts.get('Driver')).toBe('—');
    expect(facts.get('VBIOS')).toBe('96.00.61, 96.00.74');
    expect(facts.get('CPU')).toBe('unknown model (64 CPUs)');
    expect(facts.get('Container')).toBe('docker://ubuntu:24.04');
    expect(facts.get('Modules')).toBe('none');
    expect(new Map(fingerprintFacts(fingerprint, { verbose: true })).get('GPU UUIDs')).toBe('gpu0 GPU-0, gpu1 GPU-1, gpu2 —');
  });

  test('the workload: its folder, its commit, whether it had uncommitted changes', () => {
    expect(workloadText(null)).toBe('not recorded');
    expect(workloadText({ dir: '/w', gitCommit: null, gitDirty: null })).toBe('/w (not a git work tree)');
    expect(workloadText({ dir: '/w', gitCommit: 'abc', gitDirty: false })).toBe('/w at git abc');
    expect(workloadText({ dir: '/w', gitCommit: 'abc', gitDirty: true })).toBe('/w at git abc (uncommitted changes)');
  });

  test('one line for a table cell; ids shortened to 12 characters', () => {
    expect(fingerprintSummary(fingerprint)).toBe('NVIDIA H100 × 2, NVIDIA A100 × 1 · driver — · CUDA 12.2 · Slurm — · container docker://ubuntu:24.04');
    expect(fingerprintSummary({ ...fingerprint, gpus: [] })).toMatch(/^no GPU · /);
    expect(fingerprintPrefix('0123456789abcdef')).toBe('0123456789ab');
    expect(fingerprintPrefix(null)).toBe('none');
  });
});

describe('power state', () => {
  test('a request in words, every knob', () => {
    expect(powerStateText({ gpuPowerLimitW: 300, gpuLockedClocksMHz: [1000, 1500], moduleLimitW: 900, cpuFreqKHz: 2_000_000 })).toBe(
      'GPU power limit 300 W, GPU clocks locked 1000–1500 MHz, module limit 900 W, CPU max 2.00 GHz',
    );
    expect(powerStateText({ gpuLockedClocksMHz: [1410, 1410] })).toBe('GPU clocks locked 1410 MHz');
    expect(powerStateText({})).toBe('none');
    expect(powerStateText(null)).toBe('none');
  });

  const record: PowerRecordFields = {
    ok: true, node: 'nid001', job: '7', requested: { gpuLockedClocksMHz: [1000, 1500], cpuFreqKHz: 2_000_000 },
    previous: { gpus: [{ index: 1, lockedClocksMHz: null }, { index: 0, lockedClocksMHz: null }], cpuMaxFreqKHz: 3_100_000 },
    applied: { gpus: [{ index: 0, lockedClocksMHz: [1000, 1500] }], cpuMaxFreqKHz: 2_000_000 },
    error: null,
  };

  test('a record as rows: each GPU the helper read, sorted, each knob asked for, then the CPUs', () => {
    expect(powerRecordRows(record)).toEqual([
      { target: 'gpu0', setting: 'locked clocks', requested: '1000–1500 MHz', previous: 'not locked', applied: '1000–1500 MHz' },
      { target: 'gpu1', setting: 'locked clocks', requested: '1000–1500 MHz', previous: 'not locked', applied: '—' },
      { target: 'CPUs', setting: 'max frequency', requested: '2.00 GHz', previous: '3.10 GHz', applied: '2.00 GHz' },
    ]);
    expect(powerRecordStatus(record)).toBe('applied by the node helper for job 7');
    expect(powerRecordStatus({ ...record, ok: false, error: null })).toMatch(/^not applied: the node helper failed \(it gave no reason\)/);
  });

  test('the state in force per GPU; the CPUs read back per node', () => {
    const rows = powerInForceRows({
      requested: null, cpuMaxFreqKHz: { nid001: 2_000_000, nid002: null },
      gpus: [{ node: 'nid001', gpu: 3, powerLimitW: null, moduleLimitW: 900, smClockMaxMHz: null, appClockMHz: null, maxTempC: null, throttledShare: 0.5, throttleReasons: [] }],
    });
    expect(rows).toEqual([{ node: 'nid001', gpu: 'gpu3', powerLimit: '—', moduleLimit: '900 W', smClockMax: '—', appClock: '—', maxTemp: '—', throttled: '50.0 %' }]);
    expect(cpuMaxFreqText({ cpuMaxFreqKHz: { nid001: 2_000_000, nid002: null } })).toBe('nid001 2.00 GHz, nid002 —');
    expect(cpuMaxFreqText({ cpuMaxFreqKHz: {} })).toBeNull();
  });

  test("Slurm's figure, with the ratio when there is one", () => {
    expect(slurmEnergyFigure({ energyJ: 1500, ratio: null, note: '' })).toBe('1.50 kJ');
    expect(slurmEnergyFigure({ energyJ: 1500, ratio: 1.0449, note: '' })).toBe("1.50 kJ (1.04 × erg's)");
    expect(slurmEnergyFigure({ energyJ: null, ratio: null, note: '' })).toBe('none');
  });
});

describe('campaign lines', () => {
  test('the power note and readable flag names', () => {
    expect(powerNoteLine({ note: 'erg set it' })).toBe('Power state: erg set it');
    expect(powerNoteLine(null)).toBeNull();
    expect(flagLabel('shared_idle_baseline')).toBe('shared idle baseline');
  });

  test('the run order in a few words, with the seed of a randomized one', () => {
    expect(runOrderLabel({ order: 'randomized-blocks', seed: 1234 })).toBe('randomized complete blocks, seed 1234');
    expect(runOrderLabel({ order: 'blocks', seed: null })).toBe('complete blocks in listed order');
    expect(runOrderLabel({ order: 'configuration-major', seed: null })).toBe('configuration-major (every repetition of a configuration, then the next)');
    expect(runOrderLine({ order: 'randomized-blocks', seed: 7 })).toBe('Run order: randomized complete blocks, seed 7');
    expect(runOrderLine(undefined)).toBeNull();
  });

  test('differing machines: only configurations with more than one kind, named by id', () => {
    const list = differingMachines([
      { key: 'a', fingerprints: 1, fingerprintDifferences: [] },
      { key: 'b', id: 'b@0123', fingerprints: 3, fingerprintDifferences: ['x: 1 (1 run) vs 2 (2 runs)'] },
      { key: 'c' },
    ]);
    expect(list.map((d) => [d.label, d.differences])).toEqual([['b@0123: 3 kinds of machine', ['x: 1 (1 run) vs 2 (2 runs)']]]);
  });

  test('entries grouped by fingerprint: marks, exclusions and the CSV go by id, the CSV carries the class', () => {
    const summary = { n: 1, mean: 1, ci95: [1, 1] };
    const entry = (id: string, fingerprint: string | null) => ({ key: 'k', id, fingerprint, parameters: {}, n: 1, paretoOptimal: true, timeS: summary, energyJ: summary, avgPowerW: summary, edpJs: summary });
    const results = { configurations: [entry('k@aaaa', 'aaaa00'), entry('k@none', null)], best: { time: 'k@aaaa', energy: 'k@aaaa', edp: 'k@aaaa' }, excluded: [{ key: 'k@none' }], groupedBy: 'fingerprint' as const };
    expect(measuredConfigurations(results).map(entryId)).toEqual(['k@aaaa']);
    expect(marksOf(results, results.configurations[1]!).bestTime).toBe(false);
    const rows = resultsCsvRows(results);
    expect(rows[0]!.slice(0, 2)).toEqual(['key', 'fingerprint']);
    expect(rows.slice(1).map((r) => r.slice(0, 2))).toEqual([['k', 'aaaa00'], ['k', null]]);
    expect(resultsCsvRows({ ...results, groupedBy: 'configuration' })[0]).not.toContain('fingerprint');
  });
});
