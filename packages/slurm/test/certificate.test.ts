import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import {
  certificateExpired,
  certificateKeyProblem,
  certificateStatus,
  parseCertificate,
  warningLeadMs,
  type SshCertificate,
} from '../src';

// Made by fixtures/certificates/make.sh with ssh-keygen; each .txt is `ssh-keygen -L` of its certificate.
const dir = path.join(__dirname, 'fixtures', 'certificates');
const read = (name: string) => readFileSync(path.join(dir, name), 'utf8');

function parsed(name: string): SshCertificate {
  const result = parseCertificate(read(name));
  if (!result.ok) throw new Error(result.message);
  return result.certificate;
}

/** What `ssh-keygen -L` says, in the parser's terms (its times are UTC: make.sh runs under TZ=UTC). */
function keygenSays(name: string) {
  const text = read(name);
  const field = (label: string) => new RegExp(`^\\s+${label}: (.*)$`, 'm').exec(text)?.[1] ?? null;
  const list = (label: string) => {
    const m = new RegExp(`^\\s+${label}: ?(.*)\\n((?:\\s{16}.*\\n)*)`, 'm').exec(text);
    if (!m || m[1] === '(none)') return [];
    return m[2]!.split('\n').map((l) => l.trim().split(' ')[0]!).filter(Boolean);
  };
  const valid = field('Valid')!;
  const range = /^from (\S+) to (\S+)$/.exec(valid);
  return {
    kind: / (user|host) certificate$/.exec(field('Type')!)![1],
    publicKeySha256: field('Public key')!.split(' ')[1],
    signingKeySha256: field('Signing CA')!.split(' ')[1],
    keyId: JSON.parse(field('Key ID')!),
    serial: field('Serial'),
    validAfter: valid === 'forever' ? null : `${range![1]}.000Z`,
    validBefore: valid === 'forever' ? null : `${range![2]}.000Z`,
    principals: list('Principals'),
    criticalOptions: list('Critical Options'),
    extensions: list('Extensions'),
  };
}

describe('parseCertificate agrees with ssh-keygen -L', () => {
  test.each(['ed25519_key-cert', 'rsa_key-cert', 'ecdsa_key-cert', 'other_key-cert'])('%s', (name) => {
    const c = parsed(`${name}.pub`);
    expect({
      kind: c.kind,
      publicKeySha256: c.publicKeySha256,
      signingKeySha256: c.signingKeySha256,
      keyId: c.keyId,
      serial: c.serial,
      validAfter: c.validAfter?.toISOString() ?? null,
      validBefore: c.validBefore?.toISOString() ?? null,
      principals: c.principals,
      criticalOptions: c.criticalOptions,
      extensions: c.extensions,
    }).toEqual(keygenSays(`${name}.txt`));
  });

  test('the certified key is the one in the .pub file that was signed', () => {
    for (const type of ['ed25519', 'rsa', 'ecdsa']) {
      const pub = read(`${type}_key.pub`).split(' ');
      const c = parsed(`${type}_key-cert.pub`);
      expect(c.publicKey.toString('base64')).toBe(pub[1]);
      expect(c.keyType).toBe(pub[0]);
    }
  });

  test('type, blob and comment of the line', () => {
    const c = parsed('ed25519_key-cert.pub');
    expect(c.type).toBe('ssh-ed25519-cert-v01@openssh.com');
    expect(c.comment).toBe('erg');
    expect(c.blob.toString('base64')).toBe(read('ed25519_key-cert.pub').split(' ')[1]);
  });
});

describe('parseCertificate refuses what is not a certificate, with a message that says what to send', () => {
  test.each([
    ['an empty text', '', /empty/],
    ['a plain public key', read('ed25519_key.pub'), /this is a plain public key, not a certificate/],
    ['two certificates', `${read('ed25519_key-cert.pub')}\n${read('rsa_key-cert.pub')}`, /more than one line/],
    ['a blob that is not base64', 'ssh-ed25519-cert-v01@openssh.com !!!', /not base64/],
    ['a DSA certificate', 'ssh-dss-cert-v01@openssh.com AAAA', /is not an OpenSSH certificate erg can use/],
  ])('%s', (_what, text, why) => {
    const r = parseCertificate(text);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.message).toMatch(why);
      expect(r.message).toContain('ssh-keygen -s');
    }
  });

  test('a blob whose inner type differs from the line\'s', () => {
    const [, blob] = read('ed25519_key-cert.pub').split(' ');
    const r = parseCertificate(`ssh-rsa-cert-v01@openssh.com ${blob}`);
    expect(r).toMatchObject({ ok: false, message: expect.stringMatching(/malformed \(the blob says "ssh-ed25519-cert-v01@openssh.com"/) });
  });

  test('truncated or extended blobs fail cleanly, never throw', () => {
    const [type, base64] = read('rsa_key-cert.pub').split(' ');
    const blob = Buffer.from(base64!, 'base64');
    for (const cut of [4, 40, 300, blob.length - 1]) {
      expect(parseCertificate(`${type} ${blob.subarray(0, cut).toString('base64')}`).ok).toBe(false);
    }
    expect(parseCertificate(`${type} ${Buffer.concat([blob, Buffer.from([0])]).toString('base64')}`)).toMatchObject({ ok: false, message: expect.stringMatching(/after the signature/) });
  });

  test('arbitrary bytes never throw', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.constantFrom('ssh-ed25519-cert-v01@openssh.com', 'ssh-rsa-cert-v01@openssh.com', 'ecdsa-sha2-nistp256-cert-v01@openssh.com'), (bytes, type) => {
          const r = parseCertificate(`${type} ${Buffer.from(bytes).toString('base64') || 'AA=='}`);
          expect(typeof r.ok).toBe('boolean');
        }),
    );
  });

  test('a line longer than the limit is refused before it is decoded', () => {
    expect(parseCertificate(`ssh-ed25519-cert-v01@openssh.com ${'A'.repeat(20_000)}`)).toMatchObject({ ok: false, message: expect.stringMatching(/longer than 16384/) });
  });
});

describe('certificateKeyProblem', () => {
  test('null for a user certificate of the private key', () => {
    for (const type of ['ed25519', 'rsa', 'ecdsa']) expect(certificateKeyProblem(parsed(`${type}_key-cert.pub`), read(`${type}_key`))).toBeNull();
  });

  test("another key's certificate names both fingerprints", () => {
    const c = parsed('ed25519_key-cert.pub');
    expect(certificateKeyProblem(c, read('rsa_key'))).toMatch(new RegExp(`certifies the key ${c.publicKeySha256.replace(/[+/]/g, '\\$&')}, not this private key \\(SHA256:`));
  });

  test('a host certificate is refused for logging in', () => {
    expect(certificateKeyProblem(parsed('other_key-cert.pub'), read('ed25519_key'))).toMatch(/host certificate/);
  });
});

describe('certificateStatus and the warning window', () => {
  // Valid 2026-12-01T12:00Z to 20:00Z: 8 h.
  const c = parsed('ed25519_key-cert.pub');
  const at = (iso: string) => new Date(iso);

  test('before, during, in the warning window, at and after the end (valid_before is exclusive, as in OpenSSH)', () => {
    expect(certificateStatus(c, at('2026-12-01T11:59:59Z'))).toBe('not-yet-valid');
    expect(certificateStatus(c, at('2026-12-01T12:00:00Z'))).toBe('valid');
    // Default: 24 h or the last quarter of the validity, whichever is shorter: 2 h here.
    expect(warningLeadMs(c, { windowS: 86_400, share: 0.25 })).toBe(2 * 3600_000);
    expect(certificateStatus(c, at('2026-12-01T17:59:59Z'))).toBe('valid');
    expect(certificateStatus(c, at('2026-12-01T18:00:00Z'))).toBe('expiring');
    expect(certificateStatus(c, at('2026-12-01T19:59:59Z'))).toBe('expiring');
    expect(certificateExpired(c, at('2026-12-01T19:59:59Z'))).toBe(false);
    expect(certificateStatus(c, at('2026-12-01T20:00:00Z'))).toBe('expired');
    expect(certificateExpired(c, at('2026-12-01T20:00:00Z'))).toBe(true);
  });

  test('the window is configurable: a fixed lead, or a share of the validity', () => {
    expect(certificateStatus(c, at('2026-12-01T19:00:00Z'), { windowS: 1800, share: 1 })).toBe('valid');
    expect(certificateStatus(c, at('2026-12-01T19:31:00Z'), { windowS: 1800, share: 1 })).toBe('expiring');
    expect(certificateStatus(c, at('2026-12-01T14:00:00Z'), { windowS: 86_400, share: 0.9 })).toBe('expiring');
  });

  test('a certificate valid forever never expires nor warns', () => {
    const forever = parsed('rsa_key-cert.pub');
    expect(certificateStatus(forever, at('2999-01-01T00:00:00Z'))).toBe('valid');
    expect(certificateExpired(forever, at('2999-01-01T00:00:00Z'))).toBe(false);
  });
});
