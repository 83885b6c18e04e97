import { createHash } from 'node:crypto';

/**
 * OpenSSH's fingerprint of a host key: `SHA256:` + unpadded base64 of sha256 over the raw key
 * blob, exactly what `ssh-keygen -lf` and `ssh-keyscan | ssh-keygen -lf -` print, so admins can
 * compare it by eye with the value configured for a cluster.
 */
export function hostKeyFingerprint(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`;
}

/** Compares fingerprints, tolerating a missing `SHA256:` prefix or base64 padding in configuration. */
export function fingerprintsEqual(expected: string, actual: string): boolean {
  const norm = (s: string) => s.trim().replace(/^SHA256:/i, '').replace(/=+$/, '');
  return norm(expected) === norm(actual);
}
