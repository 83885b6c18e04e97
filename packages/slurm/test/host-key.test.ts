import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fingerprintsEqual, hostKeyFingerprint } from '../src';
import { bash, tempDir } from './helpers';

describe('hostKeyFingerprint', () => {
  it('matches what ssh-keygen -lf prints for the same key', () => {
    const { dir, cleanup } = tempDir();
    try {
      const key = path.join(dir, 'host_key');
      expect(bash(['-c', `ssh-keygen -q -t ed25519 -N '' -f '${key}'`]).status).toBe(0);
      const pub = readFileSync(`${key}.pub`, 'utf8').trim().split(' ');
      const blob = Buffer.from(pub[1] ?? '', 'base64');
      const expected = bash(['-c', `ssh-keygen -lf '${key}.pub'`]).stdout.toString().split(' ')[1];
      expect(hostKeyFingerprint(blob)).toBe(expected);
      expect(hostKeyFingerprint(blob)).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    } finally {
      cleanup();
    }
  });

  it('compares fingerprints tolerating a missing prefix or padding, nothing else', () => {
    const fp = 'SHA256:9GPHuoWLDzQ71b4GTAbiqkqdh+/M2tXvLd8AiLkymnE';
    expect(fingerprintsEqual(fp, fp)).toBe(true);
    expect(fingerprintsEqual('9GPHuoWLDzQ71b4GTAbiqkqdh+/M2tXvLd8AiLkymnE=', fp)).toBe(true);
    expect(fingerprintsEqual(fp.toLowerCase(), fp)).toBe(false);
    expect(fingerprintsEqual('SHA256:', fp)).toBe(false);
  });
});
