import { MIN_UPLOAD_BYTES_PER_S, writeDeadlineMs } from '../src/sftp-channel';

// An SFTP write's deadline grows with what it carries: a job script gets the plain request
// deadline, the agent runtime's ~50 MB tarball the time it takes at the slowest link erg accepts
// (it failed at a flat 30 s on a loaded machine, and would never arrive over a slow WAN link).

describe('SFTP write deadlines', () => {
  test('small files: the request deadline; large ones: plus their time at the slowest accepted rate', () => {
    expect(writeDeadlineMs(30_000, 0)).toBe(30_000);
    expect(writeDeadlineMs(30_000, 4096)).toBe(30_000 + Math.ceil((4096 / MIN_UPLOAD_BYTES_PER_S) * 1000));
    const tarball = 51_659_697;
    expect(writeDeadlineMs(30_000, tarball)).toBeGreaterThan(30_000 + 190_000);
    expect(writeDeadlineMs(30_000, tarball)).toBeLessThan(30_000 + 200_000);
  });
});
