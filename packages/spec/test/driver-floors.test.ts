import * as fs from 'node:fs';
import * as path from 'node:path';
import { C2C_FLOOR, compareVersions, DRIVER_FLOORS, driverBranch, driverFloorsTable, judgeFloor } from '../src/driver-floors';

// The floors have one owner (src/driver-floors.ts); docs/energy.md's table is that list rendered.
const energyDoc = fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'docs', 'energy.md'), 'utf8');

describe('driver and library floors', () => {
  it('docs/energy.md holds the floors table exactly as DRIVER_FLOORS renders it', () => {
    const section = energyDoc.slice(energyDoc.indexOf('### Driver and library floors'));
    const table = section.slice(section.indexOf('| feature |')).split('\n\n')[0];
    expect(table).toBe(driverFloorsTable());
  });

  it('judges a stack by driver branch and DCGM version; unknown where the version could not be read', () => {
    const gpm = DRIVER_FLOORS.find((f) => f.key === 'gpm-c2c')!;
    const dcgm = DRIVER_FLOORS.find((f) => f.key === 'dcgm-c2c')!;
    expect(judgeFloor(gpm, { driverVersion: '575.57.08', dcgmVersion: null })).toBe('met');
    expect(judgeFloor(gpm, { driverVersion: '550.54.15', dcgmVersion: '4.2.3' })).toBe('missing');
    expect(judgeFloor(gpm, { driverVersion: null, dcgmVersion: null })).toBe('unknown');
    expect(judgeFloor(dcgm, { driverVersion: '535.183.01', dcgmVersion: '4.1.0' })).toBe('met');
    expect(judgeFloor(dcgm, { driverVersion: '575.57.08', dcgmVersion: '3.3.9' })).toBe('missing');
    expect(judgeFloor(dcgm, { driverVersion: '575.57.08', dcgmVersion: null })).toBe('unknown');
  });

  it('reads versions numerically, not as text', () => {
    expect(compareVersions('4.10.0', '4.9')).toBeGreaterThan(0);
    expect(compareVersions('4.1', '4.1.0')).toBe(0);
    expect(driverBranch('550.54.15')).toBe(550);
    expect(driverBranch('unknown')).toBeNull();
    expect(C2C_FLOOR).toBe('needs driver ≥ 575 / DCGM ≥ 4.1');
  });
});
