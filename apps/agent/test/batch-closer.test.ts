import path from 'node:path';
import { BatchCloser } from '../src/batch-closer';
import { createLogger } from '../src/log';
import { nodeInfoMembers } from '../src/meta';
import { SampleStore } from '../src/samples';
import { Spool } from '../src/spool';
import { cleanupTempDirs, readSpool, tempDir } from './helpers';

// BatchCloser and the node's fingerprint: it rides on the first batch of the process that declares
// the sensors — not on a later one that declares them again after a sensor dropped out, and not
// lost with a batch the spool could not take.

afterAll(cleanupTempDirs);
const log = createLogger('silent');
const nodeInfo = nodeInfoMembers({
  fingerprint: {
    node: 'n1', hostname: 'h', kernel: 'k', arch: 'arm64', cpuModel: 'ARM Neoverse-V2', cpuCount: 72, gpus: [], driverVersion: null, cudaVersion: null,
    nvmlVersion: null, slurmVersion: null, container: null, modules: [], workload: null, agentVersion: '0.1.0',
  },
  power: { status: 'absent', record: null },
});

test('the fingerprint goes with the first batch that declares the sensors, once', () => {
  const dir = tempDir();
  const spool = new Spool(path.join(dir, 'n1.spool'), path.join(dir, 'n1.acked'), log);
  const store = new SampleStore();
  const a = store.register({ sensor: 'gpu0.power', source: 'nvml', unit: 'W' });
  const b = store.register({ sensor: 'gpu0.temp', source: 'nvml', unit: '°C' });
  const closer = new BatchCloser('n1', store, spool, undefined, log, nodeInfo);
  closer.close(); // nothing sampled: no batch, and the fingerprint still pending
  store.push(a, 1, 300);
  closer.close();
  store.push(a, 2, 301);
  closer.close();
  store.drop(b); // the sensor set changes: the next batch declares it again, without the fingerprint
  store.push(a, 3, 302);
  closer.close();
  spool.close();
  const batches = readSpool(dir, 'n1');
  expect(batches.map((x) => [x.seq, x.sensors?.length ?? null, x.fingerprint?.cpuModel ?? null])).toEqual([
    [0, 2, 'ARM Neoverse-V2'],
    [1, null, null],
    [2, 1, null],
  ]);
  expect(batches[0] && 'power' in batches[0]).toBe(false); // no record read: no `power`
});

test('a batch the spool could not take does not take the fingerprint with it', () => {
  const dir = tempDir();
  const spool = new Spool(path.join(dir, 'n1.spool'), path.join(dir, 'n1.acked'), log);
  const store = new SampleStore();
  const a = store.register({ sensor: 'gpu0.power', source: 'nvml', unit: 'W' });
  const closer = new BatchCloser('n1', store, spool, undefined, log, nodeInfo);
  const append = spool.append.bind(spool);
  spool.append = () => {
    throw new Error('ENOSPC: no space left on device');
  };
  store.push(a, 1, 300);
  closer.close();
  spool.append = append;
  store.push(a, 2, 301);
  closer.close();
  spool.close();
  const [first] = readSpool(dir, 'n1');
  expect(closer.spoolErrors).toBe(1);
  expect(first?.seq).toBe(0);
  expect(first?.sensors).toHaveLength(1);
  expect(first?.fingerprint?.cpuCount).toBe(72);
});
