import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { utils } from 'ssh2';
import { checkPrivateKey } from '../src/private-key';

const data = Buffer.from('erg signs this');

describe('checkPrivateKey: keys the SSH client can use, or why not', () => {
  test('an Ed25519 PKCS#8 key becomes an OpenSSH key that signs as the original would', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const pkcs8 = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(utils.parseKey(pkcs8)).toBeInstanceOf(Error); // what ssh2 does with it as given
    const checked = checkPrivateKey(pkcs8);
    if (!checked.ok) throw new Error(checked.message);
    expect(checked.type).toBe('ssh-ed25519');
    expect(checked.key).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END OPENSSH PRIVATE KEY-----\n$/);
    const parsed = utils.parseKey(checked.key);
    if (parsed instanceof Error) throw parsed;
    // Same key: its signature verifies with the original public key, and the public halves agree.
    expect(verify(null, data, publicKey, parsed.sign(data))).toBe(true);
    const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
    expect(parsed.getPublicSSH().subarray(-32)).toEqual(raw);
  });

  test.each([
    ['rsa', { modulusLength: 2048 }, 'ssh-rsa'],
    ['ec', { namedCurve: 'P-256' }, 'ecdsa-sha2-nistp256'],
  ] as const)('a %s PKCS#8 key is rewritten into a PEM format ssh2 reads', (kind, options, type) => {
    const { privateKey, publicKey } = generateKeyPairSync(kind as 'rsa', options as { modulusLength: number });
    const checked = checkPrivateKey(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    if (!checked.ok) throw new Error(checked.message);
    expect(checked.type).toBe(type);
    const parsed = utils.parseKey(checked.key);
    if (parsed instanceof Error) throw parsed;
    expect(createPublicKey(parsed.getPublicPEM()).export({ format: 'jwk' })).toEqual(publicKey.export({ format: 'jwk' }));
  });

  test('keys ssh2 reads already are kept as given', () => {
    const sec1 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ type: 'sec1', format: 'pem' }).toString();
    expect(checkPrivateKey(sec1)).toEqual({ ok: true, key: sec1, type: 'ecdsa-sha2-nistp384' });
  });

  test('a key with a passphrase is refused, saying how to remove it', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    for (const pem of [
      rsa.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' }).toString(),
      rsa.export({ type: 'pkcs1', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' }).toString(),
    ]) {
      const checked = checkPrivateKey(pem);
      expect(checked).toMatchObject({ ok: false, problem: 'encrypted' });
      expect(!checked.ok && checked.message).toContain("ssh-keygen -p -N ''");
    }
  });

  test('a key that does not parse, or of a type ssh2 cannot use, is refused with the reason', () => {
    const garbage = '-----BEGIN OPENSSH PRIVATE KEY-----\nbm90IGEga2V5\n-----END OPENSSH PRIVATE KEY-----\n';
    expect(checkPrivateKey(garbage)).toMatchObject({ ok: false, problem: 'unsupported', message: expect.stringContaining('ssh-keygen -t ed25519') });
    const notPkcs8 = '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n';
    expect(checkPrivateKey(notPkcs8)).toMatchObject({ ok: false, problem: 'unsupported', message: expect.stringContaining('PKCS#8') });
    const ed448 = generateKeyPairSync('ed448').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(checkPrivateKey(ed448)).toMatchObject({ ok: false, problem: 'unsupported', message: expect.stringContaining('ed448') });
  });
});
