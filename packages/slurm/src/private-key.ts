import { createPrivateKey, randomBytes, type KeyObject } from 'node:crypto';
import { utils } from 'ssh2';

/**
 * Whether a private key given at cluster registration is one the SSH client (ssh2) can use, so
 * that a bad key is refused when it is registered rather than on the scheduler's first connection.
 * erg connects unattended: keys protected by a passphrase are refused.
 *
 * PKCS#8 keys (`-----BEGIN PRIVATE KEY-----`, what `openssl genpkey` writes) are rewritten into a
 * format ssh2 reads — RSA as PKCS#1, ECDSA as SEC1, Ed25519 as an OpenSSH key — since ssh2 reads
 * none of PKCS#8. The rewritten key is the same key: what is stored is what connects.
 */
export type PrivateKeyCheck =
  | { ok: true; /** The key as it is to be stored (PKCS#8 rewritten, else as given). */ key: string; /** ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256, … */ type: string }
  | { ok: false; problem: 'encrypted' | 'unsupported'; message: string };

const MAKE_ONE = "create a key for erg with `ssh-keygen -t ed25519 -N '' -f erg_key` (and add erg_key.pub to ~/.ssh/authorized_keys on the cluster)";

export function checkPrivateKey(text: string): PrivateKeyCheck {
  const trimmed = text.trim();
  if (trimmed.startsWith('-----BEGIN ENCRYPTED PRIVATE KEY-----')) return encrypted();
  let key = `${trimmed}\n`;
  if (trimmed.startsWith('-----BEGIN PRIVATE KEY-----')) {
    const rewritten = fromPkcs8(key);
    if (typeof rewritten !== 'string') return rewritten;
    key = rewritten;
  }
  const parsed = utils.parseKey(key);
  if (parsed instanceof Error) {
    return /passphrase|encrypted/i.test(parsed.message) ? encrypted() : unsupported(parsed.message);
  }
  const one = Array.isArray(parsed) ? (parsed.length === 1 ? parsed[0] : undefined) : parsed;
  if (!one) return unsupported('the file holds more than one key');
  if (!one.isPrivateKey()) return unsupported('this is a public key; send the private key (the file without .pub)');
  return { ok: true, key, type: one.type };
}

function encrypted(): PrivateKeyCheck {
  return {
    ok: false,
    problem: 'encrypted',
    message: `the key is protected by a passphrase, which erg cannot type (it connects unattended): remove it from a copy with \`ssh-keygen -p -N '' -f COPY\`, or ${MAKE_ONE}`,
  };
}

function unsupported(why: string): PrivateKeyCheck {
  return { ok: false, problem: 'unsupported', message: `not a private key erg can use (${why}): send an unencrypted ed25519, ECDSA or RSA key in OpenSSH or PEM format, or ${MAKE_ONE}` };
}

function fromPkcs8(pem: string): string | PrivateKeyCheck {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch (err) {
    return unsupported(`the PKCS#8 key does not parse: ${(err as Error).message}`);
  }
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return key.export({ type: 'pkcs1', format: 'pem' }).toString();
    case 'ec':
      return key.export({ type: 'sec1', format: 'pem' }).toString();
    case 'ed25519':
      return openSshEd25519(key);
    default:
      return unsupported(`${key.asymmetricKeyType ?? 'unknown'} keys are not supported by erg's SSH client`);
  }
}

/** An Ed25519 key in the `openssh-key-v1` format (PROTOCOL.key of OpenSSH), unencrypted. */
function openSshEd25519(key: KeyObject): string {
  const jwk = key.export({ format: 'jwk' });
  const seed = Buffer.from(jwk.d!, 'base64url');
  const pub = Buffer.from(jwk.x!, 'base64url');
  const string = (b: Buffer | string) => {
    const data = typeof b === 'string' ? Buffer.from(b) : b;
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    return Buffer.concat([len, data]);
  };
  const uint32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  };
  const publicBlob = Buffer.concat([string('ssh-ed25519'), string(pub)]);
  const check = randomBytes(4).readUInt32BE();
  let secret = Buffer.concat([uint32(check), uint32(check), string('ssh-ed25519'), string(pub), string(Buffer.concat([seed, pub])), string('')]);
  // Padded with 1, 2, 3, … to the cipher's block size (8 for "none").
  const pad = (8 - (secret.length % 8)) % 8;
  secret = Buffer.concat([secret, Buffer.from(Array.from({ length: pad }, (_, i) => i + 1))]);
  const body = Buffer.concat([
    Buffer.from('openssh-key-v1\0'), string('none'), string('none'), string(''), uint32(1), string(publicBlob), string(secret),
  ]).toString('base64');
  const lines = body.match(/.{1,70}/g) ?? [];
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`;
}
